"""``python -m toolreplay.testing``: the same as ``toolreplay double``."""

from toolreplay.testing._command import double

double(prog_name="python -m toolreplay.testing")
