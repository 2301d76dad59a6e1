"""The SDK's version, in a module of its own so any layer can read it without importing the
top-level package (which would load the whole public API).

Example:
    >>> from gkeml_sdk.version import __version__
    >>> __version__.count(".")
    2
"""

__version__ = "0.1.0"
