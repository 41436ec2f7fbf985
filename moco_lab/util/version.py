"""The library version (part of every compiled-kernel cache key)."""
__version__ = "0.2.0"
