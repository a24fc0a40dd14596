"""hopscore's version, in a module that imports nothing (``hopscore.__version__`` is this)."""

__version__ = "0.1.0"
