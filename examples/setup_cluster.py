"""From an empty cluster to a queued job: the Kueue setup a platform engineer applies once,
and a job that uses it. Without a cluster it prints the objects; with `--apply`, it applies
them to the cluster of your kubeconfig and submits the job."""

from __future__ import annotations

import sys

from gkeml_sdk import (
    Accelerator,
    Capacity,
    Client,
    ClusterSetup,
    Team,
    TopologyPlacement,
    TpuSlice,
    TrainingJob,
)

setup = ClusterSetup(
    capacity=[
        # A3 nodes carry GKE's topology labels, so their flavors serve topology-aware placement.
        Capacity(
            accelerator=Accelerator("h100", count=8),
            provisioning=["standard", "spot", "queued"],
            topology=True,
        ),
        Capacity(accelerator=TpuSlice("v6e", "4x4"), provisioning=["spot", "queued"]),
    ],
    teams=[
        Team(name="research", namespaces=["research"], quota={"h100": 32, "v6e-4x4": 32}),
        Team(name="prod", namespaces=["prod"], quota={"h100": 16}, borrowing_limit=16),
    ],
    priorities={"batch": 100, "urgent": 1000},
)

job = TrainingJob(
    name="llama-ft",
    namespace="research",
    image="us-docker.pkg.dev/my-project/ml/trainer:1",
    command=["python", "train.py"],
    accelerator=Accelerator("h100", count=8),
    nodes=4,
    provisioning="queued",  # all 4 nodes at once, through a ProvisioningRequest
    queue="research-queued",  # ClusterSetup names a team's queue <team>-<mode>
    placement=TopologyPlacement("subblock", mode="preferred"),
    max_runtime="2d",
    priority="batch",
    checkpoint_dir="gs://my-bucket/llama-ft",
)

if __name__ == "__main__":
    if "--apply" in sys.argv:
        client = Client()
        print(client.apply_setup(setup))
        print(f"{job.name}: {client.submit(job).state}")
    else:
        print(setup.compile().to_yaml())
        print("---")
        print(job.compile().to_yaml())
        print(f"# {job.name}:\n{job.estimate_cost(hours=48)}")
