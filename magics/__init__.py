"""IPython extension for gkeml: `%load_ext gkeml_magics`."""

from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    """Register the gkeml magics with IPython."""
    from .magics import register

    register(ipython)
