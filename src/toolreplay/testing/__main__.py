"""``python -m toolreplay.testing``: the same as ``toolreplay double``."""

from toolreplay._cli.double_cmd import double

double(prog_name="python -m toolreplay.testing")
