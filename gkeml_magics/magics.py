"""The magics themselves: parse the line, call the SDK, display the result. Every error the
user can cause becomes one `UsageError` line, never a traceback."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from gkeml_sdk import (
    Client,
    GkemlError,
    LocalOptions,
    NoClusterError,
    Run,
    SpecError,
    TrainingJob,
)

from . import options as o
from . import parsers as p
from .advice import magic_words
from .display import ConfigView, CostView, DryRun, RunTable, RunView, no_cluster_note
from .explain_view import PreviewView, WhyView, status_line
from .tracebacks import install as install_tracebacks


class GkeMagics:
    """The magics of one IPython shell, with that shell's defaults (`%gke_config`)."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.defaults = o.MagicDefaults()
        self._local_names: set[str] = set()  # runs this session started locally
        # One cluster client per configuration for the session: its discovery and preflight
        # answers (kept for a minute) spare every later cell their reads.
        self._clusters: dict[tuple[str | None, ...], Client] = {}

    def gke_train(self, line: str, cell: str | None) -> Any:
        """Run the cell as a TrainingJob: `%%gke_train --gpu h100:8 --nodes 2 --local`.

        Options mirror TrainingJob's fields; see docs/notebooks.md or `%gke_train?`.
        """
        with _usage_errors():
            ns = p.parse(p.train_parser(), line)
            if not (cell or "").strip():
                raise p.OptionError("%%gke_train: the cell is empty; write the training code below")
            local = ns.local or self.defaults.backend == "local"
            if ns.chaos is not None and not local:
                raise p.OptionError("%%gke_train: --chaos needs --local (it simulates preemption)")
            job = o.train_job(ns, self.defaults, cell or "", self.shell.user_ns)
            if ns.dry_run:
                hours = (job.max_runtime or 3600) / 3600
                self._display(DryRun.of(job, hours))
                return None
            client = self._backend(local, o.local_options(ns) if local else None)
            if ns.preview:
                return PreviewView(job.name, client.preview(job))
            run = client.submit(job)
            if local:
                self._local_names.add(run.name)
        wait = ns.wait if ns.wait is not None else local
        if not wait:
            return RunView(run)
        self._follow(run, ns.timeout)
        return None

    def gke_config(self, line: str) -> Any:
        """Show (no options) or set the defaults: `%gke_config --namespace ml --queue team-a`."""
        with _usage_errors():
            ns = p.parse(p.config_parser(), line)
            self.defaults = o.apply_config(ns, self.defaults)
        return self._show(ConfigView(self.defaults.rows()))

    def gke_status(self, line: str) -> Any:
        """Show one run with its history (`%gke_status NAME`), or every run."""
        with _usage_errors():
            ns = p.parse(p.parsers()["gke_status"], line)
            if ns.name is None:
                return self._show(self._run_table(ns.local))
            return self._show(RunView(self._run(ns.name, ns.local)))

    def gke_why(self, line: str) -> Any:
        """Why a run is where it is, with the evidence folded: `%gke_why NAME [--local]`."""
        with _usage_errors():
            ns = p.parse(p.parsers()["gke_why"], line)
            return self._show(WhyView(ns.name, self._run(ns.name, ns.local).explain()))

    def gke_logs(self, line: str) -> None:
        """Print a run's logs prefixed by rank:
        `%gke_logs NAME [--follow] [--by-time] [--rank 0]`."""
        with _usage_errors():
            ns = p.parse(p.parsers()["gke_logs"], line)
            run = self._run(ns.name, ns.local)
            lines = run.logs(follow=ns.follow, by_time=ns.by_time)
            if ns.rank is not None:  # every backend prefixes lines alike (Run.log_prefix)
                lines = (text for text in lines if Run.log_slot(text) == ns.rank)
            try:
                for text in lines:
                    print(text)
            except KeyboardInterrupt:
                print(f"stopped following {run.name}; it keeps running")

    def gke_cancel(self, line: str) -> None:
        """Stop a run and every process or pod it started: `%gke_cancel NAME`."""
        with _usage_errors():
            ns = p.parse(p.parsers()["gke_cancel"], line)
            run = self._run(ns.name, ns.local)
            run.cancel()
            print(f"{run.name}: {run.state}")

    def gke_jobs(self, line: str) -> Any:
        """List runs, newest first: `%gke_jobs [--local]`."""
        with _usage_errors():
            ns = p.parse(p.parsers()["gke_jobs"], line)
            return self._show(self._run_table(ns.local))

    def gke_cost(self, line: str) -> Any:
        """Estimate cost: `%gke_cost --gpu h100:8 --nodes 2 --spot --hours 10`."""
        with _usage_errors():
            ns = p.parse(p.cost_parser(), line)
            fields = o.job_fields(ns, self.defaults)
            job = TrainingJob(name="cost-estimate", command=["true"], **fields)
            return self._show(CostView(job.estimate_cost(hours=ns.hours)))

    def _follow(self, run: Run, timeout: float | None) -> None:
        started = time.monotonic()
        handle: Any = None
        try:
            for item in run.follow(timeout=timeout):
                if isinstance(item, str):
                    print(item, flush=True)
                elif handle is None:
                    handle = self._display(status_line(run, item, started), display_id=True)
                else:
                    handle.update(status_line(run, item, started))
        except KeyboardInterrupt:
            print(f"stopped following {run.name}; it keeps running (%gke_cancel {run.name})")
        except GkemlError as exc:  # a timeout: the run continues
            print(f"{exc}")
        if handle is not None:
            handle.update(RunView(run))

    def _backend(self, local: bool, options: LocalOptions | None = None) -> Client:
        from gkeml_sdk import KubernetesSettings, LocalSettings

        d = self.defaults
        if local:
            return Client(
                local=LocalSettings(
                    run_dir=d.run_dir, namespace=d.namespace, options=options or LocalOptions()
                )
            )
        key = (d.namespace, d.context, d.kubeconfig)
        if key not in self._clusters:
            self._clusters[key] = Client(
                kubernetes=KubernetesSettings(
                    namespace=d.namespace, context=d.context, kubeconfig=d.kubeconfig
                )
            )
        return self._clusters[key]

    def _runs_of(self, local: bool) -> Client:
        return self._backend(local or self.defaults.backend == "local")

    def _run(self, name: str, local: bool) -> Run:
        try:
            return self._runs_of(local or name in self._local_names).get_run(name)
        except NoClusterError:  # with no cluster the local runs are the only ones
            return self._backend(True).get_run(name)

    def _run_table(self, local: bool) -> RunTable:
        try:
            return RunTable(self._runs_of(local).runs())
        except NoClusterError as exc:
            return RunTable(self._backend(True).runs(), note=no_cluster_note(exc))

    def _show(self, view: Any) -> None:
        """Line magics display what they show instead of returning it: IPython displays only
        a cell's last value, and each of several magics in one cell should show."""
        self._display(view)

    def _display(self, obj: Any, display_id: bool = False) -> Any:
        from IPython.display import display

        show: Callable[..., Any] = display
        return show(obj, display_id=True) if display_id else show(obj)


@contextmanager
def _usage_errors() -> Iterator[None]:
    """Turn the errors a user causes into IPython's one-line UsageError."""
    from IPython.core.error import UsageError

    try:
        yield
    except p.OptionError as exc:
        raise UsageError(str(exc)) from None
    except SpecError as exc:
        raise UsageError(magic_words(str(exc))) from None
    except GkemlError as exc:
        raise UsageError(f"{type(exc).__name__}: {magic_words(str(exc))}") from None
    except ImportError as exc:  # a backend whose dependencies are missing
        raise UsageError(f"{exc}: install gkeml with its dependencies, or use --local") from None


def register(ipython: Any) -> GkeMagics:
    """Register every gkeml magic with `ipython`; returns the object holding its defaults."""
    magics = GkeMagics(ipython)
    install_tracebacks(ipython)
    ipython.register_magic_function(magics.gke_train, "cell", "gke_train")
    for name in ("gke_config", "gke_status", "gke_why", "gke_logs", "gke_cancel", "gke_jobs",
                 "gke_cost"):  # fmt: skip
        ipython.register_magic_function(getattr(magics, name), "line", name)
    return magics
