"""The version, in a module of its own so the modules that print or send it need not import the package
root (which names every module in its lazy export table: an import of the root from inside is a cycle)."""

__version__ = "0.1.0"
