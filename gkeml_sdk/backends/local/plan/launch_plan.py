"""What a local run's supervisor needs, as plain data (`launch.json`): made at submit from the
`TrainingJob` and its `LocalOptions`, so the supervisor reads no job and its process imports
neither pydantic nor the spec layer, which would cost more CPU than the processes it starts."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from gkeml_sdk.backends.local.plan.local_environment import slot_env, slots
from gkeml_sdk.backends.local.system.json_fields import Fields

if TYPE_CHECKING:
    from gkeml_sdk.backends.local.plan.local_options import LocalOptions
    from gkeml_sdk.training.model import TrainingJob

# Stopping processes: SIGTERM, then SIGKILL this long after, unless the job or options say.
DEFAULT_GRACE_SECONDS = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class LaunchPlan:
    """How the supervisor runs a job.

    Attributes:
        argv: The command and its arguments (`$(VAR)` expanded at each start).
        bootstrap: What prepares the workspace before each start of `argv` (the pod's
            `bootstrap` init container), or empty; its exit code 3 fails the run at once.
        cwd: The processes' working directory.
        slots: Each process's slot label and the contract variables it keeps at every start.
        env: Variables every process gets beyond the contract: volume folders, the job's env.
        secret_names: Variables whose values the supervisor takes from its own environment.
        gang: Whether one process's failure restarts all of them.
        max_restarts: Restarts that failures of user code may spend.
        max_runtime: Seconds the run may last, or None.
        grace_seconds: SIGTERM-to-SIGKILL delay when stopping processes.
        chaos_after: Seconds after each start at which the gang is preempted, or None.
        chaos_times: Preemptions still to simulate.

    Example:
        >>> from gkeml_sdk import LocalOptions, TrainingJob
        >>> job = TrainingJob(name="a", command=["x"], nodes=2)
        >>> plan = plan_launch(job, LocalOptions(), argv=["x"], cwd="/", volumes={},
        ...                    checkpoint_dir="/c")
        >>> [label for label, _ in plan.slots], plan.gang, plan.grace_seconds
        (['0', '1'], True, 5.0)
        >>> LaunchPlan.from_json(plan.to_json()) == plan
        True
    """

    argv: list[str]
    bootstrap: list[str]
    cwd: str
    slots: list[tuple[str, dict[str, str]]]
    env: dict[str, str]
    secret_names: list[str]
    gang: bool
    max_restarts: int
    max_runtime: float | None
    grace_seconds: float
    chaos_after: float | None
    chaos_times: int

    def to_json(self) -> dict[str, Any]:
        """Plain data for `launch.json` (`RunDir.write_launch` adds its schema)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["slots"] = [{"slot": label, "env": env} for label, env in self.slots]
        return data

    @classmethod
    def from_json(cls, data: object, where: str = "launch.json") -> LaunchPlan:
        """Read what `to_json` wrote (to the file `where`); `ShapeError` when it is not that."""
        plan = Fields(data, where)
        return cls(
            argv=plan.texts("argv"),
            bootstrap=plan.texts("bootstrap"),
            cwd=plan.text("cwd"),
            slots=[(s.text("slot"), s.text_map("env")) for s in plan.objects("slots")],
            env=plan.text_map("env"),
            secret_names=plan.texts("secret_names"),
            gang=plan.flag("gang"),
            max_restarts=plan.whole("max_restarts"),
            max_runtime=plan.optional_number("max_runtime"),
            grace_seconds=plan.number("grace_seconds"),
            chaos_after=plan.optional_number("chaos_after"),
            chaos_times=plan.whole("chaos_times"),
        )


def plan_launch(
    job: TrainingJob,
    options: LocalOptions,
    *,
    argv: list[str],
    cwd: str,
    volumes: dict[str, str],
    checkpoint_dir: str,
    bootstrap: list[str] | None = None,
) -> LaunchPlan:
    """The plan for running `job` with `options`; `volumes` are the GKEML_VOLUME_* folders."""
    grace = options.grace_seconds
    if grace is None:
        grace = job.termination_grace_seconds
    return LaunchPlan(
        argv=argv,
        bootstrap=bootstrap or [],
        cwd=cwd,
        slots=[
            (s.label, slot_env(job, s, checkpoint_dir)) for s in slots(job, options.spawn_procs)
        ],
        env={**volumes, **job.env},
        secret_names=list(job.secret_env),
        gang=bool(job.gang),
        max_restarts=job.max_restarts,
        max_runtime=job.max_runtime,
        grace_seconds=DEFAULT_GRACE_SECONDS if grace is None else float(grace),
        chaos_after=options.chaos_after,
        chaos_times=options.chaos_times if options.chaos_after is not None else 0,
    )
