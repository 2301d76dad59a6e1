"""Log lines of a run's pods, prefixed by node rank; followed concurrently when asked."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from queue import Queue
from typing import Any

from gkeml_sdk.catalog.kueue import JOB_COMPLETION_INDEX_ANNOTATION
from gkeml_sdk.cluster.kube import KubeClient


def pod_logs(
    kube: KubeClient, pods: list[dict[str, Any]], namespace: str, *, follow: bool
) -> Iterator[str]:
    """Every line of every pod, `[node N] `-prefixed: pod after pod in rank order, or, when
    following, interleaved as they arrive until every pod's log ends.

    Example:
        >>> lines = pod_logs(kube, pods, "ml", follow=False)  # doctest: +SKIP
    """
    pods = sorted(pods, key=_rank)
    if not follow:
        for pod in pods:
            prefix = f"[node {_rank(pod)}] "
            for line in kube.pod_log(pod["metadata"]["name"], namespace, follow=False):
                yield prefix + line
        return
    yield from _merged_follow(kube, pods, namespace)


def _rank(pod: dict[str, Any]) -> int:
    meta = pod.get("metadata", {})
    index = (meta.get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION, "0")
    return int(index) if str(index).isdigit() else 0


def _merged_follow(kube: KubeClient, pods: list[dict[str, Any]], namespace: str) -> Iterator[str]:
    lines: Queue[str | None] = Queue()

    def pump(pod: dict[str, Any]) -> None:
        prefix = f"[node {_rank(pod)}] "
        try:
            for line in kube.pod_log(pod["metadata"]["name"], namespace, follow=True):
                lines.put(prefix + line)
        finally:
            lines.put(None)

    for pod in pods:
        threading.Thread(target=pump, args=(pod,), daemon=True).start()
    remaining = len(pods)
    while remaining:
        line = lines.get()
        if line is None:
            remaining -= 1
        else:
            yield line
