"""What a training job is: every field of `TrainingJob` with its meaning, and the facts derived
from them. The rules and builders of this folder read a job through `TrainingJobFields`;
`training.model.TrainingJob` adds the checks, the code shortcuts and `compile()`."""

from typing import Any, ClassVar, Literal, get_args

from pydantic import Field, field_validator

from gkeml_sdk.core.model import SpecModel
from gkeml_sdk.core.quantity import duration_seconds
from gkeml_sdk.core.secret_ref import SecretRef
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.choice import MachineChoice
from gkeml_sdk.hardware.network import NetworkChoice, NetworkMode, choose_network
from gkeml_sdk.hardware.protocol import CPU_ONLY, Hardware
from gkeml_sdk.hardware.tpu_slice import TpuSlice
from gkeml_sdk.scheduling.capacity_order import accepted_modes
from gkeml_sdk.scheduling.catalog import CapacityMode, Mode, mode
from gkeml_sdk.scheduling.kueue import DEFAULT_LOCAL_QUEUE
from gkeml_sdk.scheduling.placement import Placement
from gkeml_sdk.storage.volumes import Volume

# The framework presets (training.frameworks), named as their users name them.
Framework = Literal["torch", "deepspeed", "jax"]


class TrainingJobFields(SpecModel):
    """The fields of a `TrainingJob` and what they imply (the hardware, JobSet or Job)."""

    # The names `framework` accepts, for command lines that offer them.
    FRAMEWORKS: ClassVar[tuple[str, ...]] = get_args(Framework)

    name: str = Field(
        description="The run's name (a DNS label); the Job or JobSet and its pods carry it."
    )
    image: str | None = Field(
        default=None,
        description="Container image of every process; None runs the command locally only.",
    )
    command: list[str] | None = Field(
        default=None, description="The command each process runs, as a list of words."
    )
    args: list[str] = Field(
        default_factory=list, description="Extra arguments appended to `command`."
    )
    framework: Framework | None = Field(
        default=None,
        description='Run `command` under its framework\'s launcher: "torch" or "deepspeed" '
        '(torchrun with the job\'s rendezvous), "jax" (one process per node).',
    )
    env: dict[str, str] = Field(
        default_factory=dict, description="Environment variables of every process."
    )
    secret_env: dict[str, SecretRef] = Field(
        default_factory=dict,
        description='Variables read from Kubernetes Secrets: name -> SecretRef or "SECRET/KEY".',
    )
    accelerator: MachineChoice | None = Field(
        default=None,
        description="The hardware of each node: `Accelerator(...)`, `TpuSlice(...)`, "
        "`CpuMachine(...)` (a CPU machine for HPC, e.g. H4D) or None.",
    )
    nodes: int = Field(
        default=0,
        description="Nodes (pods) of the job, at least 1; left out, it is derived (the TPU "
        "slice's hosts, else 1).",
    )
    procs_per_node: int = Field(
        default=0,
        description="Processes per node; 0 derives it (one per whole GPU, else 1).",
    )
    gang: bool | None = Field(
        default=None,
        description="Start all pods together or none; None derives it (True for several pods).",
    )
    spot: bool = Field(
        default=False,
        description="Run on Spot VMs (cheaper, preemptible; preemptions are not counted as "
        "failures).",
    )
    provisioning: Mode = Field(
        default="standard",
        description='How nodes are obtained: "standard", "flex-start" or "queued" (DWS).',
    )
    capacity: tuple[CapacityMode, ...] = Field(
        default=(),
        description='Several modes in preference order, for a ClusterSetup(queues="ordered") '
        "queue: Kueue admits to the first with room and the pods carry no selector pinning one.",
    )
    reservation: str | None = Field(
        default=None,
        description="A specific Compute Engine reservation the nodes must come from "
        "(shared: projects/P/reservations/R).",
    )
    reservation_project: str | None = Field(
        default=None, description="The project owning a shared reservation (None: this one)."
    )
    multikueue: bool = Field(
        default=False,
        description="The queue dispatches to MultiKueue workers (sets spec.managedBy).",
    )
    placement: Placement | None = Field(
        default=None,
        description='Where pods land: "compact" or `TopologyPlacement(level=..., mode=...)`.',
    )
    queue: str = Field(
        default=DEFAULT_LOCAL_QUEUE, description="The Kueue LocalQueue the job is submitted to."
    )
    priority: str | None = Field(
        default=None,
        description="A WorkloadPriorityClass name; None keeps the queue's default.",
    )
    max_restarts: int = Field(
        default=0,
        description="Restarts allowed for failures of user code (infrastructure loss is free).",
    )
    namespace: str = Field(default="default", description="Kubernetes namespace of the job.")
    labels: dict[str, str] = Field(
        default_factory=dict, description="Labels added to the job's objects and pods."
    )
    annotations: dict[str, str] = Field(
        default_factory=dict, description="Annotations added to the job's objects and pods."
    )
    max_runtime: int | None = Field(
        default=None,
        description='Longest the job may run, in seconds (or "90m", "2h", "1d12h").',
    )
    checkpoint_dir: str | None = Field(
        default=None,
        description="Durable checkpoint location (gs://BUCKET/PATH) that survives restarts.",
    )
    stateless: bool = Field(
        default=False,
        description="The job keeps no state, so it may lose pods without durable checkpoints.",
    )
    volumes: list[Volume] = Field(
        default_factory=list,
        description="Data mounted into every pod (GcsFuse, Parallelstore, HyperdiskML, Pvc); "
        "locally, folders.",
    )
    service_account: str | None = Field(
        default=None,
        description="Kubernetes service account of the pods (Workload Identity).",
    )
    cpu: str | None = Field(
        default=None,
        description="CPU request of each pod (a Kubernetes quantity); None derives it from the "
        "machine.",
    )
    memory: str | None = Field(
        default=None,
        description="Memory request of each pod (a Kubernetes quantity); None derives it.",
    )
    termination_grace_seconds: int | None = Field(
        default=None, description="Seconds a pod gets to checkpoint after SIGTERM."
    )
    files: dict[str, str] = Field(
        default_factory=dict,
        description="Code that travels with the job: relative path -> text, mounted as the "
        "workdir.",
    )
    workdir: str | None = Field(
        default=None,
        description="Your project's folder, shipped with the job: packed (.gitignore and "
        ".gkemlignore honoured), uploaded once per content to the code bucket, unpacked at "
        "/workspace (the working directory); at submit it becomes the archive's gs:// name.",
    )
    code_bucket: str | None = Field(
        default=None,
        description="gs://BUCKET[/PREFIX] the packed workdir is uploaded to; None: the bucket "
        "of a gs:// checkpoint_dir.",
    )
    requirements: str | list[str] | None = Field(
        default=None,
        description="Python requirements installed before the command, into a virtual "
        "environment cached by their hash: a file in the workdir, or a list of lines.",
    )
    network: NetworkMode = Field(
        default="auto",
        description='Inter-node networking: "auto" takes the machine\'s GPUDirect/Fast Socket '
        "stack.",
    )

    @field_validator("max_runtime", mode="before")
    @classmethod
    def _parse_duration(cls, value: Any) -> Any:
        return duration_seconds(value, "max_runtime")

    @property
    def network_choice(self) -> NetworkChoice:
        """The networking stack the pods get (`choice.stack` None: plain pod networking)."""
        return choose_network(self.accelerator, self.nodes, self.network)

    @property
    def gpudirect_advice(self) -> list[str]:
        """A multi-node job of more than 8 whole GPUs on a machine without GPUDirect: which
        GPUDirect machine would hold them and the price difference per hour, at the price of
        the job's first provisioning mode (`pricing.network_advice`)."""
        if not isinstance(self.accelerator, Accelerator) or self.nodes < 2:
            return []
        # Imported here: the price tables load only for multi-node GPU jobs, so rendering a
        # TPU or single-node spec (`gkeml render`) stays as light as before.
        from gkeml_sdk.pricing.network_advice import network_advice

        model = mode(accepted_modes(self)[0]).price_model
        return network_advice(self.accelerator, self.nodes, model)

    @property
    def total_gpus(self) -> float:
        """Physical GPUs across all nodes (fractions for MIG/sharing)."""
        if isinstance(self.accelerator, Accelerator):
            return self.accelerator.physical_gpus * self.nodes
        return 0

    @property
    def total_chips(self) -> int:
        """TPU chips across all slices."""
        if isinstance(self.accelerator, TpuSlice):
            return self.accelerator.chips * self.accelerator.slices
        return 0

    @property
    def hardware(self) -> Hardware:
        """What each pod's hardware asks of Kubernetes: the accelerator, or `CPU_ONLY`."""
        return self.accelerator if self.accelerator is not None else CPU_ONLY

    @property
    def uses_jobset(self) -> bool:
        """Multi-node, gang or multi-host TPU jobs compile to a JobSet; the rest to a Job."""
        return self.nodes > 1 or bool(self.gang)
