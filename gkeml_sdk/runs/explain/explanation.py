"""What `run.explain()` and `client.preview(job)` answer: one sentence with the cause and the
next action, the evidence behind it, and a category (or verdict) a program can branch on.

Example:
    >>> e = Explanation(Category.QUOTA, "Queued: cluster queue acc-cq is full. Wait.")
    >>> str(e), e.category.value
    ('Queued: cluster queue acc-cq is full. Wait.', 'quota')
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Category(enum.Enum):
    """Why a run is where it is: the first nine are causes a user acts on, the rest are states."""

    QUOTA = "quota"
    CAPACITY_PROVISIONING = "capacity provisioning"
    PLACEMENT = "placement"
    IMAGE = "image"
    CRASH = "crash"
    ADMISSION_CHECK = "admission check"
    USER_ERROR = "user error"
    DEACTIVATED = "deactivated"
    PREEMPTED = "preempted"
    STARTING = "starting"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Evidence:
    """One fact read from the cluster (or the local run): an object, what it said, and when.

    Example:
        >>> str(Evidence("Workload", "wl", "QuotaReserved=False", "ExceedsMaxQuota", "no quota",
        ...              "2026-11-29T14:32:03Z"))
        '2026-11-29T14:32:03Z Workload/wl QuotaReserved=False ExceedsMaxQuota: no quota'
    """

    kind: str
    name: str
    what: str  # "QuotaReserved=False", "event Warning", "container main waiting", "status"
    reason: str = ""
    message: str = ""
    at: str = ""  # the object's own timestamp (RFC 3339), when it has one

    def __str__(self) -> str:
        head = " ".join(p for p in (self.at, f"{self.kind}/{self.name}", self.what) if p)
        tail = ": ".join(p for p in (self.reason, self.message) if p)
        return f"{head} {tail}" if tail else head


@dataclass(frozen=True)
class Explanation:
    """Why a run is in its state: `sentence` (cause and next action), `category`, `evidence`.

    Example:
        >>> from gkeml_sdk import Client  # doctest: +SKIP
        >>> print(Client().get_run("llama-ft").explain())  # doctest: +SKIP
        Never admitted: it asks for 32 nvidia.com/gpu but cluster queue acc-cq holds at most 16...
    """

    category: Category
    sentence: str
    evidence: tuple[Evidence, ...] = field(default=())

    def __str__(self) -> str:
        return self.sentence


class Verdict(enum.Enum):
    """What Kueue would do with a job submitted now."""

    FITS = "fits now"
    BORROWS = "fits by borrowing"
    PREEMPTS = "would preempt"
    WAITS = "waits"
    NEVER_FITS = "never fits"


@dataclass(frozen=True)
class Preview:
    """`client.preview(job)`: the verdict, one sentence, what it read, and for PREEMPTS the
    workloads Kueue would evict (lowest priority first); for WAITS how many running
    workloads must finish first.

    Example:
        >>> p = Preview(Verdict.FITS, "Fits now: cluster queue acc-cq has 16 of 16 free.")
        >>> p.verdict.value
        'fits now'
    """

    verdict: Verdict
    sentence: str
    evidence: tuple[Evidence, ...] = field(default=())
    preempts: tuple[str, ...] = field(default=())
    waits_for: int = 0

    def __str__(self) -> str:
        return self.sentence
