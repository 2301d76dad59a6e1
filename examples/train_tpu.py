"""Train with JAX on a TPU v5e 4x4 slice (16 chips on 4 hosts), on Spot.

    python examples/train_tpu.py          # print the manifests and the cost; submits nothing
    gkeml render examples/train_tpu.py

A multi-host slice is one pod per TPU VM, scheduled all-or-nothing (gang); the node count
comes from the topology. `framework="jax"` runs one process per TPU VM; on a TPU slice
`jax.distributed.initialize()` finds its coordinator, process count and id by itself (on GPUs,
pass JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES and JAX_PROCESS_ID: docs/frameworks.md).
"""

from __future__ import annotations

from gkeml_sdk import TpuSlice, TrainingJob


def train(steps: int) -> None:
    """Data-parallel SGD over every chip of the slice; checkpoints with Orbax."""
    import os

    import jax
    import jax.numpy as jnp
    import orbax.checkpoint as ocp

    jax.distributed.initialize()
    manager = ocp.CheckpointManager(os.environ["GKEML_CHECKPOINT_DIR"])
    params = {"w": jnp.zeros((1024, 1024))}
    start = manager.latest_step()
    if start is not None:
        params = manager.restore(start, args=ocp.args.StandardRestore(params))
    for step in range((start or 0) + 1, steps + 1):
        grads = jax.grad(lambda p: jnp.mean((p["w"] @ jnp.ones(1024)) ** 2))(params)
        params = jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)
        if step % 100 == 0:
            manager.save(step, args=ocp.args.StandardSave(params))
            if jax.process_index() == 0:
                print(f"step {step} on {jax.device_count()} chips")
    manager.wait_until_finished()


job = TrainingJob.from_function(
    train,
    kwargs={"steps": 1000},
    name="jax-v5e",
    image="us-docker.pkg.dev/my-project/trainers/jax-tpu:0.4",
    framework="jax",
    accelerator=TpuSlice("v5e", "4x4"),
    spot=True,
    queue="team-a",
    max_restarts=2,
    checkpoint_dir="gs://my-bucket/jax-v5e",
)


if __name__ == "__main__":
    print(job.estimate_cost(hours=10))
    print()
    print(job.compile().to_yaml())
