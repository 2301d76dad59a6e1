"""`gkeml nodepool plan FILE` (the create requests, offline) and `gkeml nodepool create FILE` /
`gkeml nodepool delete NAME` against a cluster through the GKE API."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import yaml

from gkeml_sdk import GkeClient, NodePool, QuotaCheck, load_node_pools, python_objects
from gkeml_sdk.errors import GkeError


def register(commands: Any) -> None:
    """Add `nodepool` and its verbs to the CLI."""
    nodepool = commands.add_parser("nodepool", help="GKE node pools for GPUs and TPUs")
    verbs = nodepool.add_subparsers(title="nodepool commands", metavar="VERB")
    plan = verbs.add_parser("plan", help="print each pool's create request (no credentials)")
    plan.set_defaults(handler=_plan)
    create = verbs.add_parser("create", help="create the pools and wait until GKE has them")
    create.set_defaults(handler=_create)
    delete = verbs.add_parser("delete", help="delete pools and their nodes")
    delete.add_argument("names", nargs="+", metavar="NAME", help="a node pool name")
    delete.set_defaults(handler=_delete)
    for parser in (plan, create):
        parser.add_argument(
            "file", help="a YAML file of node pools (NodePool fields), or a .py file of NodePools"
        )
    for parser in (create, delete):
        parser.add_argument("--project", required=True, help="the Google Cloud project")
        parser.add_argument("--location", required=True, help="the cluster's region or zone")
        parser.add_argument("--cluster", required=True, help="the GKE cluster's name")
        # A test's fake GKE API, as in examples/node_pools.py: anonymous, over REST.
        parser.add_argument("--endpoint", help=argparse.SUPPRESS)
    # ... and its fake Compute API, whose quotas `create` reads first.
    create.add_argument("--compute-endpoint", help=argparse.SUPPRESS)


def _plan(args: argparse.Namespace) -> int:
    documents = []
    for pool in _pools(args.file):
        notes = "".join(f"# note: {note}\n" for note in pool.notes)
        body = yaml.safe_dump(pool.to_dict(), sort_keys=False)
        documents.append(f"# {pool!r}\n{notes}{body}")
    print("---\n".join(documents), end="")
    return 0


def _create(args: argparse.Namespace) -> int:
    pools = _pools(args.file)  # every pool checked before the first request
    gke = _client(args)
    # Pools scale from zero, so a pool beyond the quota is created; what its ceiling would
    # need is said first, where the admin can still change it. A test's fake GKE API without
    # a fake Compute API has no Compute Engine to ask.
    if args.compute_endpoint or not args.endpoint:
        check = quota_check(args.project, args.location, args.compute_endpoint)
        for sentence in quota_sentences(lambda: check.for_pools(pools)):
            print(f"gkeml: quota: {sentence}", file=sys.stderr, flush=True)
    for pool in pools:
        print("created", ", ".join(gke.create(pool)), flush=True)
    return 0


def _delete(args: argparse.Namespace) -> int:
    gke = _client(args)
    for name in args.names:
        gke.delete(name)
        print("deleted", name, flush=True)
    return 0


def _pools(file: str) -> list[NodePool]:
    """The pools of a YAML file, or those a Python file defines (`POOLS = [NodePool(...)]`)."""
    return python_objects(file, NodePool) if file.endswith(".py") else load_node_pools(file)


def quota_check(project: str, location: str, endpoint: str | None) -> QuotaCheck:
    """The project's Compute Engine quotas in `location`'s region; anonymous against a
    test's fake Compute API at `endpoint`."""
    if not endpoint:
        return QuotaCheck(project, location)
    from google.auth.credentials import AnonymousCredentials

    anonymous = AnonymousCredentials()  # type: ignore[no-untyped-call]
    return QuotaCheck(project, location, credentials=anonymous,
                      client_options={"api_endpoint": endpoint})  # fmt: skip


def quota_sentences(read: Callable[[], list[str]]) -> list[str]:
    """What `read` says of the quotas, or that they were not checked and why (a role without
    compute.regions.get): creating the pools does not depend on reading them."""
    try:
        return read()
    except GkeError as exc:
        return [f"not checked: {exc}"]


def _client(args: argparse.Namespace) -> GkeClient:
    if not args.endpoint:
        return GkeClient(args.project, args.location, args.cluster)
    from google.auth.credentials import AnonymousCredentials

    anonymous = AnonymousCredentials()  # type: ignore[no-untyped-call]
    return GkeClient(
        args.project, args.location, args.cluster, credentials=anonymous, transport="rest",
        client_options={"api_endpoint": args.endpoint}, poll_seconds=0.2,
    )  # fmt: skip
