"""The toolreplay benchmark suite (issue 7): ``python -m bench`` prints one table of every measure."""
