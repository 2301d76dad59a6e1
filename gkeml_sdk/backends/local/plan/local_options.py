"""Knobs that exist only on the local backend (simulated preemption, process layout, grace),
and where local runs are kept on disk."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gkeml_sdk.backends.local.system.confined import check_store_name
from gkeml_sdk.core.rules import check_number
from gkeml_sdk.errors import SpecError, excerpt

RUN_DIR_ENV = "GKEML_RUN_DIR"
DEFAULT_RUN_DIR = Path("~/.gkeml/runs")


@dataclass(frozen=True)
class LocalOptions:
    """How the local backend runs a job, beyond what the `TrainingJob` says.

    - `chaos_after`: seconds after each attempt starts at which the whole gang is preempted
      (SIGTERM, then SIGKILL after `grace_seconds`), as a Spot reclaim would. A preemption
      does not spend `max_restarts`; use it to check that the code resumes from
      `GKEML_CHECKPOINT_DIR`. `chaos_times` bounds how many preemptions happen.
    - `spawn_procs`: start `nodes x procs_per_node` processes and set torchrun's `RANK`,
      `LOCAL_RANK` and `LOCAL_WORLD_SIZE`, as `torchrun` would inside each pod. Off by
      default: like a pod, each node runs the command once.
    - `grace_seconds`: SIGTERM-to-SIGKILL delay when stopping processes (default: the
      job's `termination_grace_seconds`, else 5 s).

    The job's `max_runtime` is honoured as Kueue would: the run fails (deactivated) once it
    has run that long.

    Example:
        >>> LocalOptions(chaos_after=2.0).chaos_times
        1
        >>> LocalOptions(chaos_after=-1)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: chaos_after=-1 (rule: a finite number of at least 0)...
    """

    chaos_after: float | None = None
    chaos_times: int = 1
    spawn_procs: bool = False
    grace_seconds: float | None = None

    def __post_init__(self) -> None:
        check_number("chaos_after", self.chaos_after, optional=True)
        check_number("chaos_times", self.chaos_times, integer=True)
        check_number("grace_seconds", self.grace_seconds, optional=True)
        if not isinstance(self.spawn_procs, bool):
            raise SpecError(f"spawn_procs={excerpt(self.spawn_procs, 40)}", fix="spawn_procs=True")


@dataclass(frozen=True)
class LocalSettings:
    """How `Client(local=LocalSettings(...))` runs jobs on this machine.

    - `run_dir`: where runs are kept (default: `$GKEML_RUN_DIR`, else `~/.gkeml/runs`).
    - `namespace`: the folder under `run_dir` for runs (default: each job's `namespace`).
    - `options`: `LocalOptions` for every submission of this client.
    - `volumes`: local folders of data volumes, by source: `{"gs://bucket": "/srv/bucket",
      "pvc://claim": "/srv/claim"}` (a folder inside a mapped bucket is the same folder
      inside the mapped one). Unmapped volumes get a folder under `<run_dir>/.volumes/`.
      Processes find each in `GKEML_VOLUME_<NAME>`, as pods do.

    Example:
        >>> from gkeml_sdk import LocalOptions, LocalSettings
        >>> LocalSettings(run_dir="/tmp/runs", options=LocalOptions(chaos_after=5)).options
        LocalOptions(chaos_after=5, chaos_times=1, spawn_procs=False, grace_seconds=None)
    """

    run_dir: str | Path | None = None
    namespace: str | None = None
    options: LocalOptions = field(default_factory=LocalOptions)
    volumes: Mapping[str, str | Path] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, value in (("run_dir", self.run_dir), ("namespace", self.namespace)):
            if value is not None and not isinstance(value, str | Path):
                raise SpecError(f"{name}={excerpt(value, 40)} is not a folder name", field=name)
        if self.namespace is not None:
            check_store_name("namespace", self.namespace)
        if not isinstance(self.options, LocalOptions):
            raise SpecError(f"options={excerpt(self.options, 40)}", fix="options=LocalOptions(...)")
        if not isinstance(self.volumes, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str | Path) for k, v in self.volumes.items()
        ):
            raise SpecError(
                f"volumes={excerpt(self.volumes, 80)}",
                rule="local folders by volume source",
                fix="volumes={'gs://bucket': '/srv/bucket'}",
                field="volumes",
            )


def resolve_run_root(run_dir: str | Path | None) -> Path:
    """Where local runs live: `run_dir`, else `$GKEML_RUN_DIR`, else `~/.gkeml/runs`.

    Example:
        >>> resolve_run_root("/tmp/runs")
        PosixPath('/tmp/runs')
    """
    chosen = run_dir or os.environ.get(RUN_DIR_ENV) or DEFAULT_RUN_DIR
    return Path(chosen).expanduser().absolute()
