"""The version of pbassess (a leaf module: saved results record it without importing the package)."""

__version__ = "0.1.0"
