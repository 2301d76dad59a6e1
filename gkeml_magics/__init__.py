"""IPython extension for gkeml: `%load_ext gkeml_magics` (install with
`pip install 'gkeml[notebook]'`, which brings IPython)."""

from importlib.util import find_spec
from typing import Any

# Checked without importing IPython: in a notebook it is loaded already, elsewhere this stays
# cheap. An embedding platform installs gkeml without the extra and never imports this.
if find_spec("IPython") is None:
    raise ImportError(
        "the gkeml notebook magics need IPython, which is not installed: "
        "pip install 'gkeml[notebook]'",
        name="IPython",
    )


def load_ipython_extension(ipython: Any) -> None:
    """Register the gkeml magics with IPython."""
    from .magics import register

    register(ipython)
