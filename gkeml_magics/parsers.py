"""The argparse parsers of the gkeml magics; they are also the source of the magics reference
in docs/notebooks.md."""

from __future__ import annotations

import argparse
import re
import shlex
from typing import NoReturn, get_args

from gkeml_sdk import Run, SpecError, TopologyPlacement, TrainingJob

BACKENDS = ("kubernetes", "local")
# The capacity modes, as TrainingJob.capacity spells its element type (a Literal).
MODES: tuple[str, ...] = get_args(get_args(TrainingJob.model_fields["capacity"].annotation)[0])
_UNEXPANDED = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)\}")


class OptionError(ValueError):
    """A magic line that does not parse; the message is one line with the valid choices."""


class MagicParser(argparse.ArgumentParser):
    """argparse that raises `OptionError` (one line, with the valid options) instead of
    printing usage and exiting the kernel."""

    def __init__(self, prog: str, description: str) -> None:
        super().__init__(prog=prog, description=description, add_help=False, allow_abbrev=False)

    def error(self, message: str) -> NoReturn:
        valid = ", ".join(sorted(o for a in self._actions for o in a.option_strings))
        if "unrecognized arguments" in message or "expected one argument" in message:
            message += f" (valid options: {valid})"
        raise OptionError(f"{self.prog}: {message}")


def parse(parser: MagicParser, line: str) -> argparse.Namespace:
    """Parse a magic line (already `{var}`-expanded by IPython) with shell-like quoting.

    Example:
        >>> parse(train_parser(), "--gpu h100:8 --nodes 2 --spot").nodes
        2
    """
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise OptionError(f"{parser.prog}: {exc} in {line!r}") from None
    for word in words:
        missing = _UNEXPANDED.search(word)
        if missing:
            raise OptionError(
                f"{parser.prog}: {{{missing.group(1)}}} is not a variable of the notebook "
                "(define it, or quote the braces as '{{...}}')"
            )
    return parser.parse_args(words)


def train_parser() -> MagicParser:
    """Options of `%%gke_train`: the fields of `TrainingJob`, plus how to run the cell."""
    parser = MagicParser("%%gke_train", "Run the cell as a TrainingJob on GKE or locally.")
    _job_options(parser)
    parser.add_argument("--name", help="job name (default: derived from the cell's hash)")
    parser.add_argument("--image", help="container image (default: the gke_config image)")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="K=V",
        help="environment variable for the code (repeatable)",
    )
    parser.add_argument(
        "--secret-env",
        action="append",
        default=[],
        metavar="K=SECRET/KEY",
        help="environment variable read from a Kubernetes Secret key (repeatable); "
        "--local reads it from the notebook's environment variable K",
    )
    parser.add_argument(
        "--max-restarts",
        type=int,
        metavar="N",
        help="restarts after user-code failures (preemptions are free; default 0)",
    )
    parser.add_argument(
        "--checkpoint-dir",
        metavar="URI",
        help="gs://BUCKET/PATH, pvc://CLAIM/PATH or an absolute path",
    )
    parser.add_argument(
        "--max-runtime",
        metavar="DURATION",
        help="stop after this long, e.g. 90m or 2h (Kueue max execution time)",
    )
    parser.add_argument(
        "--command",
        type=shlex.split,
        metavar="WORDS",
        help="what each process runs, split like a shell line (default: python -u main.py)",
    )
    parser.add_argument(
        "--args",
        type=shlex.split,
        metavar="WORDS",
        help="arguments appended to the command, e.g. --args '--lr 0.1 --epochs 3'",
    )
    parser.add_argument(
        "--label",
        dest="labels",
        action="append",
        default=[],
        metavar="K=V",
        help="label of the job's objects and pods (repeatable)",
    )
    parser.add_argument(
        "--annotation",
        dest="annotations",
        action="append",
        default=[],
        metavar="K=V",
        help="annotation of the job's objects and pods (repeatable)",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        default=None,
        help="the job keeps no state, so it may lose pods without a durable --checkpoint-dir",
    )
    parser.add_argument(
        "--service-account",
        metavar="NAME",
        help="Kubernetes service account of the pods (Workload Identity)",
    )
    parser.add_argument(
        "--multikueue",
        action="store_true",
        default=None,
        help="the queue dispatches to MultiKueue worker clusters",
    )
    parser.add_argument(
        "--placement",
        type=placement,
        metavar="compact|LEVEL[:MODE]",
        help="keep the pods close: compact, or a topology level (block, subblock, host, "
        "hostname) with mode preferred (default) or required, e.g. block:required",
    )
    parser.add_argument(
        "--termination-grace-seconds",
        type=int,
        metavar="N",
        help="seconds a pod gets to checkpoint after SIGTERM",
    )
    parser.add_argument(
        "--fields",
        metavar="VAR",
        help="a notebook variable holding a dict of TrainingJob fields, for the ones without "
        "an option, e.g. fields = {'volumes': [GcsFuse('my-data', mount='/data')]}; "
        "options given on the line win",
    )
    parser.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="a local file shipped next to the cell's code (repeatable)",
    )
    parser.add_argument(
        "--workdir",
        metavar="DIR",
        help="your project's folder, shipped with the job (packed, uploaded to --code-bucket "
        "or the checkpoint bucket, the working directory); --command names its entry point "
        "and the cell stays empty",
    )
    parser.add_argument(
        "--code-bucket",
        metavar="gs://BUCKET[/PREFIX]",
        help="where the packed --workdir is uploaded (default: the checkpoint bucket)",
    )
    parser.add_argument(
        "--requirements",
        metavar="FILE",
        help="a requirements file in --workdir, installed before the command (cached)",
    )
    parser.add_argument(
        "--pip",
        action="append",
        metavar="REQ",
        help="a requirement installed before the command (repeatable), e.g. --pip numpy==2.1.3",
    )
    parser.add_argument(
        "--wait",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="follow logs and status until done (default: on with --local)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="stop waiting after this long (the run continues)",
    )
    parser.add_argument(
        "--local", action="store_true", help="run on this machine as local processes"
    )
    parser.add_argument(
        "--chaos",
        type=float,
        metavar="SECONDS",
        help="with --local: preempt the gang once after SECONDS",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="validate, show the manifests and the cost; submit nothing",
    )
    parser.add_argument(
        "--preview", action="store_true", help="say what Kueue would do with it; submit nothing"
    )
    return parser


def cost_parser() -> MagicParser:
    """Options of `%gke_cost`: the accelerator fields of `TrainingJob` and the hours."""
    parser = MagicParser("%gke_cost", "Estimate what a job costs, by provisioning model.")
    _job_options(parser)
    parser.add_argument("--hours", type=float, default=1.0, help="run time to price")
    return parser


def config_parser() -> MagicParser:
    """Options of `%gke_config`; without options it shows the current defaults."""
    parser = MagicParser("%gke_config", "Show or set the defaults of the gkeml magics.")
    parser.add_argument("--backend", choices=BACKENDS, help="where gke_train cells run")
    parser.add_argument("--context", help="kubeconfig context")
    parser.add_argument("--kubeconfig", help="kubeconfig file")
    parser.add_argument("--namespace", help="Kubernetes namespace of the runs")
    parser.add_argument("--queue", help="Kueue LocalQueue")
    parser.add_argument("--image", help="container image of the jobs")
    parser.add_argument("--priority", help="Kueue WorkloadPriorityClass")
    parser.add_argument("--run-dir", help="folder of local runs (default: $GKEML_RUN_DIR)")
    parser.add_argument("--reset", action="store_true", help="forget every default")
    return parser


def run_parser(prog: str, description: str, *, name: str = "required") -> MagicParser:
    """Options of the line magics that act on runs (`%gke_status`, `%gke_logs`, ...)."""
    parser = MagicParser(prog, description)
    if name == "required":
        parser.add_argument("name", help="run name")
    elif name == "optional":
        parser.add_argument("name", nargs="?", help="run name (default: every run)")
    parser.add_argument("--local", action="store_true", help="look among local runs")
    if prog == "%gke_logs":
        parser.add_argument("--follow", action="store_true", help="stream until the run ends")
        parser.add_argument(
            "--by-time",
            action="store_true",
            help="every rank's lines merged in time order, each after its time",
        )
        parser.add_argument(
            "--rank", metavar="SLOT", type=slot, help="one process only, e.g. 0 or 1"
        )
    return parser


def slot(text: str) -> str:
    """A `--rank` value as log lines carry it (`Run.log_prefix`): a node rank, or
    NODE.LOCAL_RANK for one process of a run with a process per GPU.

    Example:
        >>> slot("1"), slot("02.3")
        ('1', '2.3')
    """
    if Run.log_slot(Run.log_prefix(text)) != text:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a rank: log lines are prefixed by node rank, so give one such as "
            "0 or 1 (or NODE.LOCAL_RANK such as 0.3 for a run with one process per GPU)"
        )
    return ".".join(str(int(part)) for part in text.split("."))


def capacity(text: str) -> tuple[str, ...]:
    """A `--capacity` value: capacity modes in preference order, comma-separated.

    Example:
        >>> capacity("reservation,spot,standard")
        ('reservation', 'spot', 'standard')
    """
    modes = tuple(word.strip() for word in text.split(","))
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"{text!r}: {', '.join(map(repr, unknown))} is not a capacity mode; "
            f"give some of {', '.join(MODES)} in preference order, e.g. reservation,spot"
        )
    return modes


def placement(text: str) -> str | TopologyPlacement:
    """A `--placement` value: `compact`, or a topology LEVEL[:MODE] (`TopologyPlacement`).

    Example:
        >>> placement("compact"), placement("block:required")
        ('compact', TopologyPlacement(level='block', mode='required', exclusive=None))
    """
    if text == "compact":
        return text
    level, sep, mode = text.partition(":")
    if sep and mode not in ("preferred", "required"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: the mode after ':' is preferred or required, e.g. block:required"
        )
    try:
        return TopologyPlacement(level, mode=mode or "preferred")
    except SpecError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def parsers() -> dict[str, MagicParser]:
    """Every magic's parser by magic name, in reference order."""
    return {
        "gke_train": train_parser(),
        "gke_config": config_parser(),
        "gke_status": run_parser("%gke_status", "Show a run, or every run.", name="optional"),
        "gke_why": run_parser("%gke_why", "Why a run is where it is, with the evidence."),
        "gke_logs": run_parser("%gke_logs", "Print a run's logs, prefixed by rank."),
        "gke_cancel": run_parser("%gke_cancel", "Stop a run and all its processes."),
        "gke_jobs": run_parser("%gke_jobs", "List the runs, newest first.", name="none"),
        "gke_cost": cost_parser(),
    }


def _job_options(parser: MagicParser) -> None:
    parser.add_argument("--gpu", metavar="MODEL[:COUNT]", help="GPUs per node, e.g. h100:8")
    parser.add_argument("--mig", metavar="PROFILE", help="one MIG slice per pod, e.g. 1g.10gb")
    parser.add_argument(
        "--sharing", metavar="STRATEGY[:CLIENTS]",
        help="share each GPU: time-sharing or mps, with clients per GPU, e.g. time-sharing:4",
    )  # fmt: skip
    parser.add_argument("--tpu", metavar="GEN:TOPOLOGY", help="a TPU slice, e.g. v5e:4x4")
    parser.add_argument("--nodes", type=int, metavar="N", help="nodes (pods) of the job")
    parser.add_argument(
        "--procs-per-node", type=int, metavar="N", help="processes per node (default: one per GPU)"
    )
    parser.add_argument(
        "--framework", choices=TrainingJob.FRAMEWORKS,
        help="run the cell under its framework's launcher: torch and deepspeed under torchrun "
        "with the job's rendezvous, jax one process per node",
    )  # fmt: skip
    parser.add_argument("--spot", action="store_true", default=None, help="run on Spot capacity")
    parser.add_argument(
        "--provisioning",
        choices=("standard", "flex-start", "queued"),
        help="how GKE finds the nodes: on demand, DWS flex-start, or DWS queued (all at once)",
    )
    parser.add_argument(
        "--network",
        choices=("auto", "standard", "gpudirect"),
        help="node-to-node networking (default auto: GPUDirect where the machine has it)",
    )
    parser.add_argument(
        "--gang",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="all nodes start and restart together (default: when nodes > 1)",
    )
    parser.add_argument(
        "--capacity",
        type=capacity,
        metavar="MODE[,MODE...]",
        help="several capacity modes in preference order, for a ClusterSetup(queues='ordered') "
        f"queue, e.g. reservation,spot,standard (modes: {', '.join(MODES)})",
    )
    parser.add_argument(
        "--reservation",
        metavar="NAME",
        help="a Compute Engine reservation the nodes must come from "
        "(shared: projects/P/reservations/R)",
    )
    parser.add_argument(
        "--reservation-project",
        metavar="PROJECT",
        help="the project owning a shared --reservation (default: this one)",
    )
    parser.add_argument("--queue", help="Kueue LocalQueue")
    parser.add_argument("--priority", help="Kueue WorkloadPriorityClass")
    parser.add_argument("--namespace", help="Kubernetes namespace")
    parser.add_argument("--cpu", help="CPU request per pod, e.g. 8")
    parser.add_argument("--memory", help="memory request per pod, e.g. 64Gi")
