"""Train with DeepSpeed ZeRO-3 on 4 nodes x 8 H100 GPUs, without ssh between the pods.

    python examples/train_deepspeed.py    # print the manifests and the cost; submits nothing
    gkeml render examples/train_deepspeed.py

`framework="deepspeed"` starts the program under torchrun with the job's rendezvous (the node
rank, the coordinator's JobSet DNS name, 8 processes per node); `deepspeed.initialize` reads
the RANK, LOCAL_RANK and WORLD_SIZE that torchrun sets, so no hostfile and no ssh are needed.
"""

from __future__ import annotations

from gkeml_sdk import Accelerator, TrainingJob


def train(steps: int) -> None:
    """One ZeRO-3 rank; DeepSpeed checkpoints into GKEML_CHECKPOINT_DIR and resumes from it."""
    import os

    import deepspeed
    import torch

    config = {
        "train_micro_batch_size_per_gpu": 8,
        "zero_optimization": {"stage": 3},
        "bf16": {"enabled": True},
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}},
    }
    model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(8)])
    engine, _, _, _ = deepspeed.initialize(
        model=model, model_parameters=model.parameters(), config=config
    )
    ckpts = os.environ["GKEML_CHECKPOINT_DIR"]
    _, state = engine.load_checkpoint(ckpts)  # (None, {}) on the first start
    start = (state or {}).get("step", 0)
    for step in range(start, steps):
        batch = torch.randn(8, 4096, device=engine.device, dtype=torch.bfloat16)
        loss = engine(batch).pow(2).mean()
        engine.backward(loss)
        engine.step()
        if (step + 1) % 100 == 0:
            engine.save_checkpoint(ckpts, client_state={"step": step + 1})
            if engine.global_rank == 0:
                print(f"step {step + 1} loss {loss.item():.4f}")


job = TrainingJob.from_function(
    train,
    kwargs={"steps": 1000},
    name="zero3",
    image="us-docker.pkg.dev/my-project/trainers/deepspeed:0.16-cuda12",
    framework="deepspeed",
    accelerator=Accelerator("h100", count=8),
    nodes=4,
    queue="team-a",
    max_restarts=3,
    checkpoint_dir="gs://my-bucket/zero3",
)


if __name__ == "__main__":
    print(job.estimate_cost(hours=10))
    print()
    print(job.compile().to_yaml())
