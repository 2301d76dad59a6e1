"""Starts the user's command in every pod. Kubernetes cannot give a pod its global node rank
(no arithmetic in env) nor say how often its rank started before (a Kueue preemption or a
resubmission changes no label), so this sets NODE_RANK, JAX_PROCESS_ID and
GKEML_RESTART_ATTEMPT, expands them in the command, and execs it. Shipped as the source of
`python3 -c` (stdlib only, no dollar sign: Kubernetes would expand it); the local backend
calls `record_start`, so a restart counts the same way on both."""

from __future__ import annotations

import os
import re
import sys

STARTS = os.path.join(".gkeml", "starts")
_D = re.escape(chr(36))
_REFERENCE = re.compile(_D + "(?:" + _D + r"|\(([-._a-zA-Z][-._a-zA-Z0-9]*)\))")


def record_start(checkpoint_dir: str, key: str, start_id: str) -> int:
    """Mark start `start_id` of process `key`; return how many other starts of it are marked."""
    folder = os.path.join(checkpoint_dir, STARTS, key)
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, start_id), "a").close()
    return sum(1 for name in os.listdir(folder) if name != start_id)


def expand(arg: str, values: dict[str, str]) -> str:
    """Expand references to `values` as Kubernetes does; others stay as written."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        return chr(36) if name is None else values.get(name, match.group(0))

    return _REFERENCE.sub(one, arg)


def node_rank(env: dict[str, str]) -> int:
    """The pod's rank among all pods: its Job's (slice's) index times pods per Job, plus its
    completion index inside the Job."""
    job, per_job = int(env["GKEML_JOB_INDEX"]), int(env["GKEML_PODS_PER_JOB"])
    return job * per_job + int(env["GKEML_POD_INDEX"])


def main(argv: list[str], env: dict[str, str]) -> int:
    """Set the computed variables and exec `argv`; returns only if it cannot."""
    node = node_rank(env)
    try:
        attempt = record_start(env["GKEML_CHECKPOINT_DIR"], str(node), env["GKEML_START_ID"])
    except OSError as exc:
        print(f"gkeml: cannot mark this start in GKEML_CHECKPOINT_DIR: {exc}", file=sys.stderr)
        return 1
    values = {"NODE_RANK": str(node), "JAX_PROCESS_ID": str(node)}
    values["GKEML_RESTART_ATTEMPT"] = str(attempt)
    command = [expand(arg, values) for arg in argv]
    try:
        os.execvpe(command[0], command, {**env, **values})
    except OSError as exc:
        print(f"gkeml: cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], dict(os.environ)))
