"""`gkeml submit|status|logs|cancel|runs|serve`: runs and model servers on a cluster
(runs also locally, with --local)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
from collections.abc import Iterator
from typing import Any

from gkeml_sdk import (
    Client,
    ClusterSetup,
    RetryPolicy,
    Run,
    RunState,
    RunStatus,
    TrainingJob,
    load_specs,
)
from gkeml_sdk.errors import NoClusterError, SpecError

# What a user without a cluster can still ask of a job: whether it fits a setup file.
FITS = "ask whether it fits a setup with `gkeml preview FILE --setup SETUP.yaml`"


def register(commands: Any) -> None:
    """Add the run commands to the CLI."""
    submit = commands.add_parser("submit", help="submit the training jobs of a spec file")
    submit.add_argument("file", help="a .yaml or .py spec file with TrainingJobs")
    submit.add_argument("--wait", action="store_true", help="follow until the runs end")
    submit.add_argument("--max-resubmits", type=int, default=0, metavar="N",
                        help="resubmit after infrastructure loss up to N times")  # fmt: skip
    submit.add_argument("--fallback-after", type=int, metavar="N",
                        help="leave Spot for on-demand after N Spot losses")  # fmt: skip
    submit.add_argument("--preview", action="store_true",
                        help="say what Kueue would do with each job; submit nothing")  # fmt: skip
    submit.add_argument("--setup", metavar="SETUP.yaml",
                        help="with --preview: ask a ClusterSetup file, not a cluster")  # fmt: skip
    submit.add_argument("--framework", choices=TrainingJob.FRAMEWORKS,
                        help="run each job's command under this framework's launcher")  # fmt: skip
    submit.add_argument("--workdir", metavar="DIR",
                        help="ship this project folder with every job (packed, uploaded once per "
                        "content, the working directory)")  # fmt: skip
    submit.add_argument("--code-bucket", metavar="gs://BUCKET[/PREFIX]",
                        help="where --workdir goes (default: the checkpoint bucket)")  # fmt: skip
    submit.add_argument("--requirements", metavar="FILE",
                        help="a requirements file in --workdir, installed first")  # fmt: skip
    submit.set_defaults(handler=_submit, without_cluster=f"run it here with --local, or {FITS}")
    status = commands.add_parser("status", help="state and history of a run (or of all runs)")
    status.add_argument("name", nargs="?", help="run name (default: every run)")
    add_output_option(status)
    status.set_defaults(handler=_status)
    logs = commands.add_parser("logs", help="logs of a run's pods, prefixed by node rank")
    logs.add_argument("name", help="run name")
    logs.add_argument("-f", "--follow", action="store_true", help="stream until the run ends")
    logs.add_argument(
        "--by-time",
        action="store_true",
        help="every rank's lines merged in time order, each after its time (RFC 3339, UTC)",
    )
    logs.set_defaults(handler=_logs)
    cancel = commands.add_parser("cancel", help="stop a run and delete its objects")
    cancel.add_argument("name", help="run name")
    cancel.set_defaults(handler=_cancel)
    runs = commands.add_parser("runs", help="runs in the namespace, newest first")
    add_output_option(runs)
    runs.set_defaults(handler=_runs)
    serve = commands.add_parser("serve", help="deploy the ServeModel specs of a file")
    serve.add_argument("file", help="a .yaml or .py spec file with ServeModels")
    serve.add_argument("--wait", type=float, metavar="SECONDS", help="wait until ready")
    serve.set_defaults(handler=_serve, without_cluster="see its objects with `gkeml render FILE`")
    for parser in (submit, status, logs, cancel, runs, serve):
        add_connection_options(parser)


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    """Where the runs are: namespace, kubeconfig context and file, or the local backend."""
    parser.add_argument("-n", "--namespace", help="Kubernetes namespace (default: the context's)")
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)"
    )
    parser.add_argument("--local", action="store_true", help="use the local backend")


def add_output_option(parser: argparse.ArgumentParser) -> None:
    """`-o json`: one JSON document on stdout, for scripts; notes still go to stderr."""
    parser.add_argument(
        "-o", "--output", choices=("text", "json"), default="text",
        help="text for people (default) or json for scripts",
    )  # fmt: skip


def client_of(args: argparse.Namespace) -> Client:
    """The client the connection options name."""
    return _client(args)


def _client(args: argparse.Namespace) -> Client:
    from gkeml_sdk import KubernetesSettings, LocalSettings

    if args.local:
        return Client(local=LocalSettings(namespace=args.namespace))
    return Client(
        kubernetes=KubernetesSettings(
            namespace=args.namespace, context=args.context, kubeconfig=args.kubeconfig
        )
    )


def _submit(args: argparse.Namespace) -> int:
    jobs = [s for s in load_specs(args.file) if isinstance(s, TrainingJob)]
    if not jobs:
        raise SpecError(
            f"{args.file}: no TrainingJob to submit", fix="use `gkeml serve` for models"
        )
    if args.framework:
        # JAX runs one process per node: the file's count (often derived from its GPUs) yields.
        override: dict[str, Any] = {"framework": args.framework}
        if args.framework == "jax":
            override["procs_per_node"] = 0
        jobs = [job.with_changes(**override) for job in jobs]
    code = {"workdir": args.workdir, "code_bucket": args.code_bucket}
    code["requirements"] = args.requirements
    changes = {k: v for k, v in code.items() if v is not None}
    if changes:
        jobs = [job.with_changes(**changes) for job in jobs]
    retry = None
    if args.max_resubmits or args.fallback_after:
        retry = RetryPolicy(
            max_resubmits=args.max_resubmits, fallback_to_on_demand_after=args.fallback_after
        )
    if args.setup and not args.preview:
        raise SpecError(
            "--setup without --preview",
            rule="a setup file can say whether a job would fit, not run it",
            fix=f"gkeml submit {args.file} --preview --setup {args.setup}",
        )
    if args.preview:
        ask = ClusterSetup.from_file(args.setup).preview if args.setup else _client(args).preview
        for job in jobs:
            print(f"{job.name}: {ask(job)}")
        return 0
    client = _client(args)
    runs = [client.submit(job, retry=retry) for job in jobs]
    for run in runs:
        print(f"submitted {run.namespace}/{run.name}")
    if not args.wait:
        return 0
    finals = client.wait_all(runs)
    for run, final in zip(runs, finals, strict=True):
        print(f"{run.name}: {final}")
    return 0 if all(f.state.value == "Succeeded" for f in finals) else 1


def _serve(args: argparse.Namespace) -> int:
    from gkeml_sdk import ServeModel

    services = [s for s in load_specs(args.file) if isinstance(s, ServeModel)]
    if not services:
        raise SpecError(f"{args.file}: no ServeModel to serve", fix="use `gkeml submit` for jobs")
    client = _client(args)
    for svc in services:
        handle = client.serve(svc)
        print(f"{handle.name}: {handle.endpoint}")
        if args.wait:
            print(f"{handle.name}: {handle.wait_ready(timeout=args.wait)}")
    return 0


def run_named(args: argparse.Namespace) -> Run:
    """The run `args.name`; with no cluster configured the local runs are the only ones, so
    it is the local run of that name, under a one-line note saying so."""
    try:
        return _client(args).get_run(args.name)
    except NoClusterError as exc:
        print(_no_cluster(exc, "this is a local run"), file=sys.stderr)
        return _local(args).get_run(args.name)


def _status(args: argparse.Namespace) -> int:
    if args.name is None:
        return _runs(args)
    run = run_named(args)
    if args.output == "json":
        print(json.dumps(run_record(run, history=True), indent=2))
        return 0
    print(f"{run.name}: {run.state}")
    for transition in run.history:
        print(f"  {transition.at:8.1f}s  attempt {transition.attempt}  {transition.status}")
    return 0


def _logs(args: argparse.Namespace) -> int:
    run = run_named(args)
    for line in run.logs(follow=args.follow, by_time=args.by_time):
        print(line)
        sys.stdout.flush()
    return 0


def _cancel(args: argparse.Namespace) -> int:
    run = run_named(args)
    if run.cancel():
        print(f"cancelled {run.namespace}/{run.name}")
    else:
        print(f"{run.namespace}/{run.name} had already finished ({run.state}): nothing to cancel")
    return 0


def _runs(args: argparse.Namespace) -> int:
    rows = [["name", "state", "reason"]]
    records = []
    with _cycles_uncollected():
        try:
            found: list[Run] = _client(args).runs()
        except NoClusterError as exc:
            print(_no_cluster(exc, "these are the local runs"), file=sys.stderr)
            found = _local(args).runs()
        unreadable = []
        for run in found:
            status = run.state
            rows.append([run.name, status.state.value, status.reason])
            if status.state is RunState.UNREADABLE:
                unreadable.append(f"{run.name}: {status.message}")
            records.append(run_record(run, status=status))
    if args.output == "json":
        print(json.dumps(records, indent=2))
        return 0
    from gkeml_sdk.cli.catalog_commands import format_table

    print(format_table(rows) if found else "no runs")
    # Why each unreadable record is refused, below the table (a reason column that long
    # would wrap every row); gkeml leaves those runs' objects alone.
    for line in unreadable:
        print(line)
    return 0


def run_record(
    run: Run, *, status: RunStatus | None = None, history: bool = False
) -> dict[str, Any]:
    """A run as plain data for `-o json`: its name, state and reason (and history).

    Example:
        >>> from gkeml_sdk import Client, LocalSettings
        >>> import tempfile
        >>> client = Client(local=LocalSettings(run_dir=tempfile.mkdtemp()))
        >>> [run_record(run) for run in client.runs()]
        []
    """
    status = status or run.state
    record: dict[str, Any] = {"name": run.name, "namespace": run.namespace}
    record.update(_status_fields(status))
    if history:
        record["history"] = [
            {"at": t.at, "attempt": t.attempt, **_status_fields(t.status), "detail": t.detail}
            for t in run.history
        ]
    return record


def _status_fields(status: RunStatus) -> dict[str, Any]:
    return {
        "state": status.state.value,
        "reason": status.reason,
        "message": status.message,
        "cause": status.cause.value if status.cause else None,
    }


@contextlib.contextmanager
def _cycles_uncollected() -> Iterator[None]:
    """Pause the cyclic garbage collector: a listing makes every run's objects (a thousand
    runs are a million of them), all alive until the table is printed, and each collection
    meanwhile would walk them all again (a third of the listing's CPU) to free nothing."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _local(args: argparse.Namespace) -> Client:
    from gkeml_sdk import LocalSettings

    return Client(local=LocalSettings(namespace=args.namespace))


def _no_cluster(exc: NoClusterError, what: str) -> str:
    """One line: no cluster is configured, what is shown instead, how to point at one."""
    return (
        f"no cluster configured ({exc.why}), so {what}; point at one with "
        f"`{exc.GET_CREDENTIALS}` or --kubeconfig PATH --context NAME"
    )
