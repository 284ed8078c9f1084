"""``python -m toolreplay``."""

from toolreplay._cli import main

main()
