"""``python -m toolreplay._cli``."""

from toolreplay._cli import main

main()
