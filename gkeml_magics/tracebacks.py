"""A gkeml error raised by the notebook's own Python shows as the CLI shows it: the message under
the user's line that raised it, without the frames inside gkeml; `%tb` shows them all."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

import pydantic

from gkeml_sdk import GkemlError

# Frames under these folders are gkeml's (and its validation library's), never the user's.
_LIBRARY = tuple(
    str(Path(path).parent) + "/"
    for path in (inspect.getfile(GkemlError), inspect.getfile(pydantic.BaseModel), __file__)
)
HINT = "(%tb shows the traceback with the frames inside gkeml)"


def install(shell: Any) -> bool:
    """Show the `GkemlError`s of `shell` the short way; a handler the user installed stays.

    Example:
        >>> from IPython.core.interactiveshell import InteractiveShell
        >>> install(InteractiveShell.instance())
        True
    """
    if shell.custom_exceptions not in ((), (GkemlError,)):
        return False
    shell.set_custom_exc((GkemlError,), show_short)
    return True


def show_short(
    shell: Any,
    etype: type[BaseException],
    value: BaseException,
    tb: TracebackType | None,
    tb_offset: int | None = None,
) -> None:
    """Show a gkeml error with the user's frames only, then keep the whole traceback as the
    last one, which `%tb` shows."""
    shell.showtraceback((etype, value, users_frames(tb)), tb_offset=tb_offset)
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
    print(HINT, file=sys.stderr)


def users_frames(tb: TracebackType | None) -> TracebackType | None:
    """`tb` without the frames inside gkeml and pydantic: what the user wrote and called.

    Example:
        >>> users_frames(None) is None
        True
    """
    kept = []
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_LIBRARY):
            kept.append(tb)
        tb = tb.tb_next
    short = None
    for item in reversed(kept):
        short = TracebackType(short, item.tb_frame, item.tb_lasti, item.tb_lineno)
    return short
