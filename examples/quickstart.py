"""Quickstart: a small training loop that checkpoints to GKEML_CHECKPOINT_DIR and resumes.

    python examples/quickstart.py           # on GKE when a cluster is configured, else locally
    python examples/quickstart.py --local   # always on this machine

Locally the job runs as two processes (two "nodes"), is preempted once on purpose
(`LocalOptions(chaos_after=...)`) and resumes from its checkpoint; at the end the script
prints the manifests it would submit to GKE.
"""

from __future__ import annotations

import sys

from gkeml_sdk import (
    Client,
    ConfigError,
    LocalOptions,
    LocalSettings,
    RunState,
    RunStatus,
    TrainingJob,
)


def train(steps: int = 40, lr: float = 0.1) -> None:
    """Fit y = 3x + 2 with SGD on this rank's shard of synthetic data; checkpoint every 5 steps.

    Runs in the job, so it imports what it uses: only its own source is shipped.
    """
    import json
    import os
    import pathlib
    import random
    import time

    rank = int(os.environ["NODE_RANK"])
    ckpt = pathlib.Path(os.environ["GKEML_CHECKPOINT_DIR"]) / f"rank-{rank}.json"
    rng = random.Random(rank)
    xs = [rng.uniform(-1, 1) for _ in range(64)]
    data = [(x, 3 * x + 2 + rng.gauss(0, 0.05)) for x in xs]
    state = {"step": 0, "w": 0.0, "b": 0.0}
    if ckpt.exists():
        state = json.loads(ckpt.read_text())
        print(f"resumed from step {state['step']} (attempt {os.environ['GKEML_RESTART_ATTEMPT']})")
    while state["step"] < steps:
        w, b = state["w"], state["b"]
        grad_w = sum(2 * (w * x + b - y) * x for x, y in data) / len(data)
        grad_b = sum(2 * (w * x + b - y) for x, y in data) / len(data)
        state = {"step": state["step"] + 1, "w": w - lr * grad_w, "b": b - lr * grad_b}
        loss = sum((state["w"] * x + state["b"] - y) ** 2 for x, y in data) / len(data)
        if state["step"] % 5 == 0:
            tmp = ckpt.with_suffix(".tmp")  # write then rename: a kill never leaves half a file
            tmp.write_text(json.dumps(state))
            tmp.replace(ckpt)
            print(f"step {state['step']:3d} loss {loss:.4f} (checkpoint saved)")
        time.sleep(0.05)
    print(f"done: w={state['w']:.2f} b={state['b']:.2f}")


job = TrainingJob.from_function(
    train,
    kwargs={"steps": 40},
    name="quickstart",
    image="python:3.12-slim",
    nodes=2,
    max_restarts=1,
)


def main(argv: list[str]) -> int:
    """Submit `job` (to GKE, or locally with one simulated preemption) and follow it."""
    run = None
    if "--local" not in argv:
        try:
            run = Client().submit(job)
        except (ConfigError, ImportError) as exc:
            print(f"no GKE cluster configured ({exc}); running on this machine instead\n")
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
    history = run.history
    preemptions = sum(t.status.state is RunState.PREEMPTED for t in history)
    print(
        f"\n{run.name}: {final.state.value} after {history[-1].at:.1f} s, "
        f"{preemptions} preemption(s), attempt {history[-1].attempt}"
    )
    print("\nOn GKE this job is these manifests (gkeml render examples/quickstart.py):\n")
    print(job.compile().to_yaml())
    return 0 if final.state is RunState.SUCCEEDED else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
