"""Quickstart: a small training loop that checkpoints to GKEML_CHECKPOINT_DIR and resumes.

    python examples/quickstart.py           # on GKE when a cluster is configured, else locally
    python examples/quickstart.py --local   # always on this machine
    python examples/quickstart.py --show-manifests   # and print the manifests for GKE

Locally the job runs as two processes (two "nodes"), is preempted once on purpose
(`LocalOptions(chaos_after=...)`) and resumes from its newest complete checkpoint: rank 0
writes them, every rank reads the newest one. On GKE they live in a bucket
(`QUICKSTART_CHECKPOINTS`, default gs://my-bucket/gkeml/quickstart), so they survive a
Kueue preemption, a Spot reclaim and a resubmission. It lists the objects it
would submit to GKE and ends with a one-line summary.
"""

from __future__ import annotations

import os
import sys

from gkeml_sdk import (
    Client,
    LocalOptions,
    LocalSettings,
    NoClusterError,
    RunState,
    RunStatus,
    TrainingJob,
)


def train(steps: int = 40, lr: float = 0.1) -> None:
    """Fit y = 3x + 2 with SGD (the same data on every rank); rank 0 checkpoints every 10 steps.

    Runs in the job, so it imports what it uses: only its own source is shipped.
    """
    import json
    import os
    import pathlib
    import random
    import time

    rank = int(os.environ["NODE_RANK"])
    restarts = int(os.environ["GKEML_RESTART_ATTEMPT"])  # earlier starts of this rank
    ckpts = pathlib.Path(os.environ["GKEML_CHECKPOINT_DIR"])
    rng = random.Random(0)  # the same data on every rank, as data-parallel replicas see it
    xs = [rng.uniform(-1, 1) for _ in range(64)]
    data = [(x, 3 * x + 2 + rng.gauss(0, 0.05)) for x in xs]
    state = {"step": 0, "w": 0.0, "b": 0.0}
    # Resume from the newest complete checkpoint: only complete ones carry their final name
    # (step-NNNNNN.json), whatever restarted the job (preemption, Spot, resubmission, a crash).
    done = [int(p.stem.split("-")[1]) for p in ckpts.glob("step-*.json")]
    if done:
        state = json.loads((ckpts / f"step-{max(done):06d}.json").read_text())
        print(f"resumed from step {state['step']} (restart {restarts})")
    while state["step"] < steps:
        w, b = state["w"], state["b"]
        grad_w = sum(2 * (w * x + b - y) * x for x, y in data) / len(data)
        grad_b = sum(2 * (w * x + b - y) for x, y in data) / len(data)
        state = {"step": state["step"] + 1, "w": w - lr * grad_w, "b": b - lr * grad_b}
        loss = sum((state["w"] * x + state["b"] - y) ** 2 for x, y in data) / len(data)
        if state["step"] % 10 == 0 and rank == 0:
            # Write, then rename: a kill never leaves half a checkpoint under a final name.
            tmp = ckpts / f".step-{state['step']:06d}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(state))
            tmp.replace(ckpts / f"step-{state['step']:06d}.json")
            print(f"step {state['step']:3d} loss {loss:.4f} (checkpoint saved)")
        time.sleep(0.05)
    print(f"done: w={state['w']:.2f} b={state['b']:.2f}")


# On GKE a job that can restart (max_restarts=1) keeps its checkpoints where new pods find
# them: here a Cloud Storage bucket mounted with GCS FUSE (or 'pvc://CLAIM/PATH'); without it
# Client().submit refuses the job. Locally they go to the run directory's checkpoints folder.
CHECKPOINTS = os.environ.get("QUICKSTART_CHECKPOINTS", "gs://my-bucket/gkeml/quickstart")
job = TrainingJob.from_function(
    train,
    kwargs={"steps": 40},
    name="quickstart",
    image="python:3.12-slim",
    nodes=2,
    max_restarts=1,
    checkpoint_dir=CHECKPOINTS,
)


def main(argv: list[str]) -> int:
    """Submit `job` (to GKE, or locally with one simulated preemption) and follow it."""
    run, no_cluster = None, None
    if "--local" not in argv:
        try:
            run = Client().submit(job)
        except (NoClusterError, ImportError) as exc:
            no_cluster = exc
            print("no GKE cluster configured: running on this machine (how to use GKE: below)")
    if run is None:
        # One simulated preemption, to see the job resume from its checkpoint.
        client = Client(local=LocalSettings(options=LocalOptions(chaos_after=1.0)))
        run = client.submit(job)
    final = run.state
    for item in run.follow(timeout=300):
        if isinstance(item, RunStatus):
            final = item
            print(f"== {item}")
        else:
            print(item)
    manifests = job.compile()
    if "--show-manifests" in argv:
        print(f"\nOn GKE this job is these manifests:\n\n{manifests.to_yaml()}")
    else:
        names = ", ".join(f"{o['kind']}/{o['metadata']['name']}" for o in manifests.objects)
        print(f"\nwould submit to GKE: {names} (--show-manifests prints them)")
    if isinstance(no_cluster, NoClusterError):
        print(f"to run on GKE: {no_cluster.GET_CREDENTIALS}, then run this again")
    history = run.history
    preemptions = sum(t.status.state is RunState.PREEMPTED for t in history)
    print(
        f"{run.name}: {final.state.value} after {history[-1].at:.1f} s, "
        f"{preemptions} preemption(s), attempt {history[-1].attempt}"
    )
    return 0 if final.state is RunState.SUCCEEDED else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
