"""``python -m toolreplay``."""

from toolreplay.cli import main

main()
