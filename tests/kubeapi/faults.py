"""Thread-safe fault injection: one-shot rules and a seeded probabilistic mode."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

KINDS = frozenset(
    {
        "429",
        "500",
        "502",
        "503",
        "504",
        "reset",
        "timeout",
        "slow",
        "slow-reply",
        "reset-after-write",
        "cut-watch",
    }
)


@dataclass(frozen=True)
class RequestInfo:
    method: str
    path: str
    query: dict[str, str]
    is_watch: bool
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names


Match = Callable[[RequestInfo], bool] | tuple[str | None, str] | None


@dataclass
class Fault:
    kind: str
    retry_after: float | None = None
    delay: float | None = None
    after_events: int = 0


@dataclass
class FaultRule:
    kind: str
    remaining: int | None  # None: unlimited
    match: Callable[[RequestInfo], bool]
    retry_after: float | None
    delay: float | None
    after_events: int
    hits: int = 0


@dataclass
class FiredFault:
    kind: str
    method: str
    path: str


def _matcher(match: Match) -> Callable[[RequestInfo], bool]:
    if match is None:
        return lambda info: True
    if callable(match):
        return match
    method, pattern = match
    regex = re.compile(pattern)
    want = method.upper() if method and method != "*" else None
    return lambda info: (want is None or info.method == want) and bool(regex.search(info.path))


def _applies(kind: str, info: RequestInfo) -> bool:
    # cut-watch only makes sense on a watch; every other kind hits any request.
    return info.is_watch if kind == "cut-watch" else True


@dataclass
class _Random:
    rate: float
    kinds: tuple[str, ...]
    rng: random.Random
    match: Callable[[RequestInfo], bool]
    retry_after: float
    delay: float | None


@dataclass
class FaultInjector:
    """`inject()` one-shot/counted rules (checked first), `random()` for a steady fault rate."""

    rules: list[FaultRule] = field(default_factory=list)
    fired: list[FiredFault] = field(default_factory=list)
    _random: _Random | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def inject(
        self,
        kind: str = "500",
        count: int | None = 1,
        match: Match = None,
        retry_after: float | None = None,
        delay: float | None = None,
        after_events: int = 0,
    ) -> FaultRule:
        """Fail the next `count` matching requests (None = every one until `clear()`).

        match: callable(RequestInfo) -> bool, or (method or None, path regex).
        retry_after: Retry-After seconds (429 default 1; 503 only when given).
        delay: seconds for "slow" (default 1; before the request is handled), "slow-reply"
            (default 1; after it is handled, before the answer leaves: the answer is as old
            as the moment it was made) and "timeout" (default 30, or until stop).
        after_events: for "cut-watch", events sent before the connection is dropped.
        """
        if kind not in KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; choose from {sorted(KINDS)}")
        rule = FaultRule(kind, count, _matcher(match), retry_after, delay, after_events)
        with self._lock:
            self.rules.append(rule)
        return rule

    def random(
        self,
        rate: float = 0.2,
        kinds: Iterable[str] = ("429", "500", "503", "reset"),
        seed: int | None = None,
        match: Match = None,
        retry_after: float = 1,
        delay: float | None = None,
    ) -> None:
        """Fail each matching request with probability `rate` (seeded, reproducible order)."""
        chosen = tuple(kinds)
        unknown = set(chosen) - KINDS
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}")
        with self._lock:
            self._random = _Random(
                rate, chosen, random.Random(seed), _matcher(match), retry_after, delay
            )

    def clear(self) -> None:
        with self._lock:
            self.rules.clear()
            self._random = None

    def count(self, kind: str | None = None) -> int:
        with self._lock:
            return sum(1 for f in self.fired if kind is None or f.kind == kind)

    def pick(self, info: RequestInfo) -> Fault | None:
        with self._lock:
            for rule in self.rules:
                if rule.remaining == 0 or not _applies(rule.kind, info) or not rule.match(info):
                    continue
                if rule.remaining is not None:
                    rule.remaining -= 1
                rule.hits += 1
                self.fired.append(FiredFault(rule.kind, info.method, info.path))
                return Fault(rule.kind, rule.retry_after, rule.delay, rule.after_events)
            rnd = self._random
            if rnd is None or not rnd.match(info) or rnd.rng.random() >= rnd.rate:
                return None
            kind = rnd.rng.choice(rnd.kinds)
            if not _applies(kind, info):
                return None
            self.fired.append(FiredFault(kind, info.method, info.path))
            return Fault(kind, rnd.retry_after, rnd.delay, 0)
