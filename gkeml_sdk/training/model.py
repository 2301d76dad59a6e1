"""`TrainingJob`: one training run on GKE, validated against GKE and Kueue rules."""

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import model_validator

from gkeml_sdk.core.model import fail
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.choice import hardware_from_data
from gkeml_sdk.hardware.cpu_machine import CpuMachine
from gkeml_sdk.hardware.protocol import CPU_ONLY
from gkeml_sdk.hardware.tpu_slice import TpuSlice
from gkeml_sdk.scheduling.capacity_order import accepted_modes, capacity_spelling
from gkeml_sdk.scheduling.rules import spot_spelling
from gkeml_sdk.training.fields import TrainingJobFields
from gkeml_sdk.training.frameworks import check_framework
from gkeml_sdk.training.rules import check_job, checkpoint_problem

if TYPE_CHECKING:
    from gkeml_sdk.core.manifests import Manifests
    from gkeml_sdk.pricing.catalog import PriceBook, PriceOverrides
    from gkeml_sdk.pricing.model import CostEstimate
    from gkeml_sdk.runs.retry import RetryPolicy


class TrainingJob(TrainingJobFields):
    """A training job: the image and command, the accelerators of each node, and how it
    survives preemption.

    Example:
        >>> job = TrainingJob(name="llama-ft", image="us-docker.pkg.dev/p/r/trainer:1",
        ...                   command=["python", "train.py"],
        ...                   accelerator=Accelerator("h100", count=8), nodes=2, spot=True,
        ...                   queue="team-a", max_restarts=3)
        >>> job.gang, job.total_gpus
        (True, 16.0)
    """

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(capacity_spelling(spot_spelling(data)))
        if data.get("framework") == "mpi":
            raise fail(
                "framework='mpi' is not a gkeml preset",
                rule="MPI starts every rank from a launcher pod over ssh; gkeml does not make "
                "that launcher, the workers' ssh servers or their keys",
                fix="framework='deepspeed' or 'torch' (no ssh: each pod starts its own ranks), "
                "or mpirun in command= with an image that sets up ssh between its pods",
                field="framework",
            )
        accelerator = hardware_from_data(data.get("accelerator"))
        if "accelerator" in data:
            data["accelerator"] = accelerator
        hardware = (
            accelerator
            if isinstance(accelerator, Accelerator | TpuSlice | CpuMachine)
            else CPU_ONLY
        )
        hosts = hardware.fixed_pods
        for field in ("nodes", "procs_per_node"):
            if isinstance(data.get(field), bool):
                raise fail(
                    f"{field}={data[field]} is not a count",
                    rule=f"{field} is a number, not a switch",
                    fix=f"{field}=2, or leave it out to derive it",
                    field=field,
                )
        # Only a missing count is derived: nodes=0 is a mistake that check_job names.
        if data.get("nodes") is None:
            data["nodes"] = hosts or 1
        if not data.get("procs_per_node"):
            # JAX drives all of a node's devices from one process.
            jax = data.get("framework") == "jax"
            data["procs_per_node"] = 1 if jax else hardware.default_procs_per_node
        if data.get("gang") is None:
            nodes = data["nodes"]
            data["gang"] = bool(hosts and hosts > 1) or (isinstance(nodes, int) and nodes > 1)
        return data

    @model_validator(mode="after")
    def _check(self) -> "TrainingJob":
        check_job(self)
        check_framework(self)
        self.network_choice  # noqa: B018 - raises SpecError for what GKE cannot do
        return self

    @classmethod
    def from_code(cls, source: str, *, name: str | None = None, **fields: Any) -> "TrainingJob":
        """A job that runs `source` (e.g. a notebook cell) as `main.py`; the code travels as a
        file, never through a shell. Without `name`, one is derived from the content.

        Example:
            >>> job = TrainingJob.from_code("print('hello')", image="python:3.12")
            >>> job.command, job.name
            (['python', '-u', 'main.py'], 'code-0d736fbf')
        """
        from gkeml_sdk.training.code import ENTRYPOINT, code_files

        files = code_files(source)
        return cls._with_code(name, "code", files, ["python", "-u", ENTRYPOINT], fields)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        kwargs: Mapping[str, Any] | None = None,
        name: str | None = None,
        **fields: Any,
    ) -> "TrainingJob":
        """A job that calls `fn(**kwargs)`. Only the function's own source is shipped, so it
        imports what it needs inside its body; `kwargs` travel as JSON.

        Example:
            >>> def train(steps: int) -> None:
            ...     print("training", steps)
            >>> TrainingJob.from_function(train, kwargs={"steps": 10}).name  # doctest: +SKIP
            'train-3f0c9a1e'
        """
        from gkeml_sdk.training.code import ENTRYPOINT, function_files

        files = function_files(fn, kwargs)
        return cls._with_code(name, fn.__name__, files, ["python", "-u", ENTRYPOINT], fields)

    @classmethod
    def from_script(
        cls,
        script: str | Path,
        *,
        script_args: Iterable[str] = (),
        include: Iterable[str] = ("*.py",),
        name: str | None = None,
        **fields: Any,
    ) -> "TrainingJob":
        """A job that runs an existing script; the files next to it that match `include`
        (globs, e.g. `"**/*.py"`, `"config.yaml"`) travel with it, so local imports work.

        Example:
            >>> job = TrainingJob.from_script("train.py", include=["*.py", "conf/*.yaml"],
            ...                               image="img")  # doctest: +SKIP
        """
        from gkeml_sdk.training.code import script_files

        files, entry = script_files(script, include)
        command = ["python", "-u", entry, *script_args]
        return cls._with_code(name, Path(script).stem, files, command, fields)

    @classmethod
    def from_workdir(
        cls,
        workdir: str | Path,
        command: Iterable[str],
        *,
        name: str | None = None,
        **fields: Any,
    ) -> "TrainingJob":
        """A job that runs `command` in your project's folder, shipped with it (packed with
        `.gitignore`/`.gkemlignore` honoured, uploaded once per content to `code_bucket` or
        the checkpoint bucket, unpacked at /workspace). Without `name`, one is derived from
        the folder's name and the job.

        Example:
            >>> import tempfile
            >>> folder = tempfile.mkdtemp()
            >>> job = TrainingJob.from_workdir(folder, ["python", "train.py"], image="img",
            ...                                code_bucket="gs://team-code/ml")
            >>> job.workdir == folder, job.command, job.name.startswith("tmp")
            (True, ['python', 'train.py'], True)
        """
        stem = Path(workdir).resolve().name
        return cls._with_code(name, stem, {}, list(command), {"workdir": str(workdir), **fields})

    @classmethod
    def _with_code(
        cls,
        name: str | None,
        prefix: str,
        files: dict[str, str],
        command: list[str],
        fields: dict[str, Any],
    ) -> "TrainingJob":
        from gkeml_sdk.training.code import derived_name

        fields = {"command": command, **fields, "files": {**files, **fields.get("files", {})}}
        job = cls(name=name or "job", **fields)
        if name is None:
            # Fields added later stay out at their defaults, so names derived before are kept.
            later: dict[str, Any] = {
                "secret_env": {},
                "provisioning": "standard",
                "capacity": (),
                "reservation": None,
                "reservation_project": None,
                "multikueue": False,
                "placement": None,
                "network": "auto",
                "volumes": [],
                "stateless": False,
                "framework": None,
                "workdir": None,
                "code_bucket": None,
                "requirements": None,
            }
            unset: dict[str, Any] = {k: True for k, d in later.items() if getattr(job, k) == d}
            unset["name"] = True
            hardware = job.accelerator
            if (
                isinstance(hardware, Accelerator | TpuSlice)
                and hardware.allocation == "device-plugin"
            ):
                unset["accelerator"] = {"allocation": True}
            payload = job.model_dump(mode="json", exclude=unset)
            job = job.model_copy(update={"name": derived_name(prefix, payload)})
        return job

    def check_checkpoints(self, retry: "RetryPolicy | None" = None) -> None:
        """Raise `SpecError` when the job can lose its pods (Spot, flex-start, `max_restarts`,
        a resubmitting `retry`) but keeps checkpoints where a new pod cannot find them.
        `Client().submit` checks it for a cluster; local runs keep their checkpoints folder.

        Example:
            >>> job = TrainingJob(name="ft", command=["x"], max_restarts=2)
            >>> job.check_checkpoints()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            gkeml_sdk.errors.SpecError: job 'ft' can lose its pods (max_restarts=2) ...
            >>> job.with_changes(checkpoint_dir="pvc://ckpt/ft").check_checkpoints()
        """
        problem = checkpoint_problem(self, retry is not None and retry.max_resubmits > 0)
        if problem is not None:
            raise problem

    def compile(self, attempt: int = 1) -> "Manifests":
        """The Kubernetes objects that run this job (attempt k > 1 of a resubmitted run is
        named `<name>--r<k>`; see `gkeml_sdk.core.labels.attempt_name`)."""
        from gkeml_sdk.training.manifests import compile_training_job

        return compile_training_job(self, attempt)

    def estimate_cost(
        self,
        hours: float = 1.0,
        prices: "PriceBook | PriceOverrides | str | None" = None,
        *,
        checkpoint_minutes: float = 30.0,
        preemptions_per_day: float = 1.0,
        restart_minutes: float = 10.0,
    ) -> "CostEstimate":
        """On-demand, Spot and flex-start cost of running `hours` (accelerators and the VM
        part of their machines), each figure a list price or a marked estimate with its source,
        the Spot saving and when Spot pays.

        `prices`: a `PriceBook`, a dict of overrides such as `{"h100": {"on_demand": 11.0}}`,
        or the path of a YAML/JSON price file. The break-even assumes each preemption loses
        half of `checkpoint_minutes` plus `restart_minutes` (a new node, the image, the
        restore); Compute Engine publishes no preemption rate, so `preemptions_per_day=1.0`
        is an assumption to replace with your own history.

        Example:
            >>> job = TrainingJob(name="a", command=["x"], accelerator=Accelerator("h100", count=8))
            >>> even = job.estimate_cost(hours=24, checkpoint_minutes=60).break_even
            >>> f"{even.saving:.0%}", even.lost_minutes, even.pays
            ('69%', 40.0, True)
        """
        from gkeml_sdk.pricing.model import estimate_cost

        return estimate_cost(
            self.hardware.billing(self.nodes),
            accepted_modes(self),
            hours,
            prices,
            checkpoint_minutes=checkpoint_minutes,
            preemptions_per_day=preemptions_per_day,
            restart_minutes=restart_minutes,
        )

    def with_changes(self, **changes: Any) -> "TrainingJob":
        """A validated copy with some fields replaced (e.g. `spot=False` for a fallback)."""
        return TrainingJob.model_validate({**self.model_dump(), **changes})

    def __repr__(self) -> str:
        return f"TrainingJob({self.name!r}, accelerator={self.accelerator!r}, nodes={self.nodes})"

    __str__ = __repr__

    def _repr_html_(self) -> str:
        import html

        return f"<code>{html.escape(repr(self))}</code>"
