"""Where and when a log line came from: the prefix every backend puts before a process's
lines and its inverse (`Run.log_prefix`, `Run.log_slot`), and the time column of the lines
`logs(by_time=True)` merges across processes."""

from __future__ import annotations

import re
import time

# A log line's origin, shared by every backend: "[<node>] " or "[<node>.<local rank>] ",
# after the time column when the lines are merged by time.
_LOG_PREFIX = re.compile(r"(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z |-  +)?\[(\d+(?:\.\d+)?)\] ")
# kubelet's `timestamps=true` prefix (RFC 3339, up to nanoseconds, in the node's time zone).
_KUBE_TIME = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d) ")
_NS = 1_000_000_000
# The time column of a line whose time was never recorded (a run logged before gkeml recorded
# times), as wide as a time.
UNTIMED = "-".ljust(len("2000-01-01T00:00:00.000000000Z"))


def log_prefix(slot: int | str) -> str:
    """The prefix every backend puts before a process's log line: its slot in brackets, the
    node rank (`1`), or node and local rank when each GPU has its own process (`"0.3"`).

    Example:
        >>> log_prefix(1) + "loss 0.1", log_prefix("0.3")
        ('[1] loss 0.1', '[0.3] ')
    """
    return f"[{slot}] "


def log_slot(line: str) -> str | None:
    """The slot a prefixed log line came from (`log_prefix`'s inverse, also after a time
    column), or None.

    Example:
        >>> log_slot("[0.3] step 1"), log_slot("[12] done"), log_slot("no prefix")
        ('0.3', '12', None)
        >>> log_slot("2026-12-07T19:53:25.000000001Z [1] step 2")
        '1'
    """
    found = _LOG_PREFIX.match(line)
    return found.group(1) if found else None


def log_time(ns: int) -> str:
    """The time column of a merged log line: RFC 3339 in UTC with nanoseconds, fixed width (as
    kubelet writes it), so that text order is time order.

    Example:
        >>> log_time(1_765_137_205_000_000_001)
        '2025-12-07T19:53:25.000000001Z'
    """
    seconds, nanos = divmod(ns, _NS)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{nanos:09d}Z"


def timed_line(at: str, slot: int | str, text: str) -> str:
    """A line as `logs(by_time=True)` shows it: its time, its slot's prefix, its text.

    Example:
        >>> timed_line("2025-12-07T19:53:25.000000001Z", 1, "loss 0.1")
        '2025-12-07T19:53:25.000000001Z [1] loss 0.1'
    """
    return f"{at} {log_prefix(slot)}{text}"


def split_kube_time(line: str) -> tuple[int, str] | None:
    """(nanoseconds since the epoch, text) of a pod log line read with `timestamps=true`, or
    None for a line without that prefix.

    Example:
        >>> split_kube_time("2025-12-07T19:53:25.5Z loss 0.1")
        (1765137205500000000, 'loss 0.1')
        >>> split_kube_time("2025-12-07T20:53:25.5+01:00 x")[0] == 1765137205500000000
        True
    """
    found = _KUBE_TIME.match(line)
    if found is None:
        return None
    import calendar  # here: the local supervisor imports this module, and never this function

    stamp, fraction, zone = found.groups()
    seconds = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S"))
    if zone != "Z":
        offset = int(zone[1:3]) * 3600 + int(zone[4:6]) * 60
        seconds -= offset if zone[0] == "+" else -offset
    nanos = int((fraction or "").ljust(9, "0"))
    return seconds * _NS + nanos, line[found.end() :]
