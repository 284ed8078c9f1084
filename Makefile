# Convenience wrappers around the two README commands (make is optional: the commands are plain Python).
.PHONY: demo test bench
demo:
	python3 scripts/dev.py demo
test:
	python3 scripts/dev.py test
bench:
	python3 scripts/dev.py bench
