"""``python -m toolreplay.cli``."""

from toolreplay.cli import main

main()
