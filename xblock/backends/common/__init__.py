"""Helpers every backend shares (native libraries in the cache, ...)."""
