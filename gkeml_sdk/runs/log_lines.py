"""Where a log line came from: the prefix every backend puts before a process's lines, and
its inverse (`Run.log_prefix`, `Run.log_slot`)."""

from __future__ import annotations

import re

# A log line's origin, shared by every backend: "[<node>] " or "[<node>.<local rank>] ".
_LOG_PREFIX = re.compile(r"\[(\d+(?:\.\d+)?)\] ")


def log_prefix(slot: int | str) -> str:
    """The prefix every backend puts before a process's log line: its slot in brackets, the
    node rank (`1`), or node and local rank when each GPU has its own process (`"0.3"`).

    Example:
        >>> log_prefix(1) + "loss 0.1", log_prefix("0.3")
        ('[1] loss 0.1', '[0.3] ')
    """
    return f"[{slot}] "


def log_slot(line: str) -> str | None:
    """The slot a prefixed log line came from (`log_prefix`'s inverse), or None.

    Example:
        >>> log_slot("[0.3] step 1"), log_slot("[12] done"), log_slot("no prefix")
        ('0.3', '12', None)
    """
    found = _LOG_PREFIX.match(line)
    return found.group(1) if found else None
