"""txlab's version (its own module, so engines read it without importing the package root)."""

__version__ = "0.1.0"
