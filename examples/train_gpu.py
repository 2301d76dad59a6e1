"""Fine-tune a model with PyTorch DDP on 2 nodes x 8 H100 GPUs, on Spot, in a Kueue queue.

    python examples/train_gpu.py          # print the manifests and the cost; submits nothing
    gkeml render examples/train_gpu.py    # the same manifests, from the CLI

Only `train`'s source travels (in a ConfigMap mounted at /gkeml/code); `framework="torch"`
starts it under torchrun, one process per GPU, with the node rank, the coordinator and the
world size from the environment contract (see docs/frameworks.md).
Preemptions restart the gang without spending max_restarts; checkpoints go to a bucket.
"""

from __future__ import annotations

from gkeml_sdk import Accelerator, TrainingJob


def train(epochs: int, lr: float) -> None:
    """One DDP worker (torchrun sets RANK/LOCAL_RANK); resumes from the newest complete
    checkpoint, whatever restarted it."""
    import os
    import pathlib

    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Linear(4096, 4096).cuda(), device_ids=[local_rank]
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    ckpts = pathlib.Path(os.environ["GKEML_CHECKPOINT_DIR"])
    start = 0
    # The newest complete checkpoint: only complete ones carry their final name.
    done = sorted(int(p.stem.split("-")[1]) for p in ckpts.glob("epoch-*.pt"))
    if done:
        saved = torch.load(ckpts / f"epoch-{done[-1]:06d}.pt", map_location="cuda")
        model.module.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        start = saved["epoch"] + 1
    for epoch in range(start, epochs):
        batch = torch.randn(64, 4096, device="cuda")
        loss = model(batch).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}
            tmp = ckpts / f".epoch-{epoch:06d}.{os.getpid()}.tmp"  # write, then rename
            torch.save({**state, "epoch": epoch}, tmp)
            tmp.replace(ckpts / f"epoch-{epoch:06d}.pt")
            print(f"epoch {epoch} loss {loss.item():.4f}")
    dist.destroy_process_group()


job = TrainingJob.from_function(
    train,
    kwargs={"epochs": 100, "lr": 1e-4},
    name="llama-ft",
    image="us-docker.pkg.dev/my-project/trainers/pytorch:2.4-cuda12",
    framework="torch",  # torchrun with the rendezvous of the job's nodes
    accelerator=Accelerator("h100", count=8),
    nodes=2,
    spot=True,
    queue="team-a",
    max_restarts=3,
    checkpoint_dir="gs://my-bucket/llama-ft",
)


if __name__ == "__main__":
    print(job.estimate_cost(hours=10))
    print()
    print(job.compile().to_yaml())
