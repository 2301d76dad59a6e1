"""`gkeml preview FILE`: what Kueue would do with each job of a spec file if it were
submitted now, asked of the cluster, or with `--setup SETUP.yaml` of a setup file offline
(and with `--pools POOLS.yaml` whether the admitted pods fit those node pools)."""

from __future__ import annotations

import argparse
from typing import Any

from gkeml_sdk import ClusterSetup, Preview, TrainingJob, load_node_pools, load_specs
from gkeml_sdk.cli.run_commands import add_connection_options, client_of
from gkeml_sdk.errors import SpecError


def register(commands: Any) -> None:
    """Add `preview` to the CLI."""
    preview = commands.add_parser(
        "preview", help="will it fit? what Kueue would do with each job; submits nothing"
    )
    preview.add_argument("file", help="a spec file with TrainingJobs")
    preview.add_argument(
        "--setup", metavar="SETUP.yaml",
        help="ask a ClusterSetup file (an empty cluster with its queues) instead of a cluster",
    )  # fmt: skip
    preview.add_argument(
        "--pools", metavar="POOLS.yaml",
        help="with --setup: node pools too (gkeml nodepool files); say whether the admitted "
        "pods fit their nodes",
    )  # fmt: skip
    add_connection_options(preview)
    preview.set_defaults(
        handler=_preview, without_cluster="ask a setup file offline with --setup SETUP.yaml"
    )


def _preview(args: argparse.Namespace) -> int:
    jobs = [s for s in load_specs(args.file) if isinstance(s, TrainingJob)]
    if not jobs:
        raise SpecError(f"{args.file}: no TrainingJob to preview", fix="add a TrainingJob")
    if args.pools and not args.setup:
        raise SpecError("--pools without --setup", fix="gkeml preview FILE --setup S --pools P")
    if args.setup:
        answers = _against_setup(jobs, args.setup, args.pools)
    else:
        answers = _against_cluster(jobs, args)
    for job, answer in zip(jobs, answers, strict=True):
        print(f"{job.name}: {answer}")
    return 0


def _against_cluster(jobs: list[TrainingJob], args: argparse.Namespace) -> list[Preview]:
    client = client_of(args)
    return [client.preview(job) for job in jobs]


def _against_setup(jobs: list[TrainingJob], file: str, pools_file: str | None) -> list[Preview]:
    setup = ClusterSetup.from_file(file)
    pools = load_node_pools(pools_file) if pools_file else []
    return [setup.preview(job, pools) for job in jobs]
