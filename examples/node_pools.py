"""Node pools for a training cluster: H100s through flex-start with queued provisioning, and
two TPU v5e 4x4 slices on Spot (one pool per slice). Printing needs nothing more; creating
needs `pip install 'gkeml[gke]'`.

    python examples/node_pools.py                                  # print the requests
    python examples/node_pools.py --create my-project/us-central1/ml   # create them

Each pool scales to zero when idle; the printed requests are what GKE receives.
"""

from __future__ import annotations

import argparse

import yaml

from gkeml_sdk import Accelerator, GkeClient, GkemlError, NodePool, TpuSlice

POOLS = [
    NodePool.for_accelerator(
        Accelerator("h100", count=8), name="h100-dws", provisioning="queued", max_nodes=4
    ),
    NodePool.for_accelerator(
        TpuSlice("v5e", "4x4", slices=2), name="v5e-spot", spot=True, zones=("us-central1-a",)
    ),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--create", metavar="PROJECT/LOCATION/CLUSTER")
    parser.add_argument("--endpoint", help="another GKE API endpoint (anonymous), e.g. a test one")
    args = parser.parse_args()
    for pool in POOLS:
        print(f"# {pool!r}")
        for note in pool.notes:
            print(f"# note: {note}")
        print(yaml.safe_dump(pool.to_dict(), sort_keys=False))
    if not args.create:
        return 0
    project, location, cluster = args.create.split("/")
    options = {}
    if args.endpoint:
        from google.auth.credentials import AnonymousCredentials

        options = {
            "credentials": AnonymousCredentials(),
            "transport": "rest",
            "client_options": {"api_endpoint": args.endpoint},
        }
    gke = GkeClient(project, location, cluster, poll_seconds=0.1, **options)
    try:
        for pool in POOLS:
            print("created", ", ".join(gke.create(pool)))
    except GkemlError as exc:
        print(f"error: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
