"""The translation of parsed magic options into public SDK objects, and the per-shell defaults."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from gkeml_sdk import Accelerator, LocalOptions, TpuSlice, TrainingJob

from .parsers import OptionError


@dataclass
class MagicDefaults:
    """Per-shell defaults that `%gke_config` shows and sets (never module globals)."""

    backend: str = "kubernetes"
    context: str | None = None
    kubeconfig: str | None = None
    namespace: str | None = None
    queue: str | None = None
    image: str | None = None
    priority: str | None = None
    run_dir: str | None = None

    def rows(self) -> list[tuple[str, str]]:
        """(name, value) of every default, unset ones shown as '-'."""
        return [(f.name, str(getattr(self, f.name) or "-")) for f in fields(self)]


# Options whose parsed value is the field's value, under the field's name.
_AS_PARSED = (
    "nodes", "procs_per_node", "framework", "gang", "spot", "provisioning", "network", "cpu",
    "memory", "capacity", "reservation", "reservation_project", "command", "args", "stateless",
    "service_account", "multikueue", "placement", "termination_grace_seconds", "max_restarts",
    "checkpoint_dir", "max_runtime", "queue", "priority", "namespace", "image", "workdir",
    "code_bucket", "requirements",
)  # fmt: skip
# Repeatable KEY=VALUE options, by the field they fill.
_KEY_VALUES = {
    "env": "--env", "secret_env": "--secret-env", "labels": "--label",
    "annotations": "--annotation",
}  # fmt: skip
_DEFAULTED = ("queue", "priority", "namespace", "image")


def job_fields(
    ns: argparse.Namespace, defaults: MagicDefaults, variables: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """TrainingJob keyword arguments from parsed options, over the `--fields` dict (looked up
    in `variables`, the notebook's), over the `%gke_config` defaults. Unset options are left
    out so the spec's own defaults and derivations apply.

    Example:
        >>> from gkeml_magics.parsers import parse, train_parser
        >>> f = job_fields(parse(train_parser(), "--gpu l4:2 --spot"), MagicDefaults())
        >>> f["accelerator"], f["spot"]
        (Accelerator('l4', count=2), True)
    """
    out: dict[str, Any] = {k: getattr(defaults, k) for k in _DEFAULTED if getattr(defaults, k)}
    out.update(_named_fields(getattr(ns, "fields", None), variables or {}))
    accelerator = _accelerator(ns)
    if accelerator is not None:
        out["accelerator"] = accelerator
    for key in _AS_PARSED:
        if getattr(ns, key, None) is not None:
            out[key] = getattr(ns, key)
    for key, option in _KEY_VALUES.items():
        items = getattr(ns, key, None)
        if items:
            out[key] = {**out.get(key, {}), **dict(_key_value(item, option) for item in items)}
    if getattr(ns, "pip", None):
        if getattr(ns, "requirements", None):
            raise OptionError("use either --requirements FILE or --pip REQ, not both")
        out["requirements"] = list(ns.pip)
    return out


def train_job(
    ns: argparse.Namespace,
    defaults: MagicDefaults,
    cell: str,
    variables: Mapping[str, Any] | None = None,
) -> TrainingJob:
    """The TrainingJob of a `%%gke_train` cell: the cell is `main.py`, `--file`s travel with it.

    Example:
        >>> from gkeml_magics.parsers import parse, train_parser
        >>> ns = parse(train_parser(), "--nodes 2 --name demo")
        >>> train_job(ns, MagicDefaults(), "print(1)").files
        {'main.py': 'print(1)'}
    """
    fields_ = job_fields(ns, defaults, variables)
    files = dict(fields_.pop("files", {}))
    for item in ns.file:
        path = Path(item)
        try:
            files[path.name if path.is_absolute() else path.as_posix()] = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise OptionError(f"%%gke_train: --file {item}: {exc}") from None
    if files:
        fields_["files"] = files
    named = fields_.pop("name", None)
    if fields_.get("workdir") is not None:
        return _workdir_job(cell, ns.name or named, fields_)
    return TrainingJob.from_code(cell, name=ns.name or named, **fields_)


def _workdir_job(cell: str, name: str | None, fields_: dict[str, Any]) -> TrainingJob:
    # The workdir is the code: a cell beside it would be a second copy of the entry point.
    if cell.strip() or fields_.get("files"):
        raise OptionError(
            "%%gke_train --workdir ships your project's folder as the code: leave the cell "
            "empty (and drop --file) and name the entry point with --command 'python train.py'"
        )
    if not fields_.get("command"):
        raise OptionError("%%gke_train --workdir needs --command, e.g. --command 'python train.py'")
    fields_.pop("files", None)
    return TrainingJob.from_workdir(
        fields_.pop("workdir"), fields_.pop("command"), name=name, **fields_
    )


def local_options(ns: argparse.Namespace) -> LocalOptions:
    """LocalOptions of a `%%gke_train --local` cell."""
    return LocalOptions(chaos_after=ns.chaos)


def _accelerator(ns: argparse.Namespace) -> Accelerator | TpuSlice | None:
    if ns.gpu and ns.tpu:
        raise OptionError("use either --gpu or --tpu: a node has GPUs or TPU chips, not both")
    if ns.mig and not ns.gpu:
        raise OptionError("--mig needs --gpu MODEL, e.g. --gpu a100-40gb:1 --mig 1g.5gb")
    if ns.sharing and not ns.gpu:
        raise OptionError("--sharing needs --gpu MODEL, e.g. --gpu l4 --sharing time-sharing:4")
    if ns.gpu:
        model, _, count = ns.gpu.partition(":")
        if not model or (count and not count.isdigit()):
            raise OptionError(f"--gpu {ns.gpu!r}: expected MODEL[:COUNT], e.g. h100:8 or l4")
        extra: dict[str, Any] = {"mig": ns.mig} if ns.mig else {}
        if ns.sharing:
            extra.update(_sharing(ns.sharing))
        return Accelerator(model, count=int(count or 1), **extra)
    if ns.tpu:
        generation, sep, topology = ns.tpu.partition(":")
        if not generation or not sep or not topology:
            raise OptionError(f"--tpu {ns.tpu!r}: expected GEN:TOPOLOGY, e.g. v5e:2x4 or v5p:2x2x2")
        return TpuSlice(generation, topology)
    return None


def _named_fields(name: str | None, variables: Mapping[str, Any]) -> dict[str, Any]:
    """The dict of TrainingJob fields a `--fields VAR` option names."""
    if name is None:
        return {}
    example = "{'volumes': [GcsFuse('my-data', mount='/data')]}"
    if name not in variables:
        raise OptionError(
            f"%%gke_train: --fields {name}: the notebook has no variable {name!r}; "
            f"define it first, e.g. {name} = {example}"
        )
    value = variables[name]
    if not isinstance(value, Mapping):
        raise OptionError(
            f"%%gke_train: --fields {name}: expected a dict of TrainingJob fields, "
            f"e.g. {name} = {example}; {name} is a {type(value).__name__}"
        )
    unknown = [key for key in value if key not in TrainingJob.model_fields]
    if unknown:
        raise OptionError(
            f"%%gke_train: --fields {name}: {', '.join(map(repr, unknown))} is not a field of "
            f"TrainingJob (fields: {', '.join(TrainingJob.model_fields)})"
        )
    return dict(value)


def _sharing(option: str) -> dict[str, Any]:
    """`--sharing time-sharing:4` as Accelerator fields; the strategy itself is checked by
    Accelerator, which names the valid ones."""
    strategy, sep, clients = option.partition(":")
    if not strategy or (sep and not clients.isdigit()):
        raise OptionError(
            f"--sharing {option!r}: expected STRATEGY[:CLIENTS], e.g. time-sharing:4 or mps:8"
        )
    return {"sharing": strategy, **({"clients_per_gpu": int(clients)} if sep else {})}


def _key_value(item: str, option: str = "--env") -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        example = "WANDB_API_KEY=wandb/api-key" if option == "--secret-env" else "LR=0.001"
        raise OptionError(f"{option} {item!r}: expected KEY=VALUE, e.g. {option} {example}")
    return key, value


def apply_config(ns: argparse.Namespace, defaults: MagicDefaults) -> MagicDefaults:
    """`defaults` with the options given to `%gke_config` applied (or reset)."""
    if ns.reset:
        return MagicDefaults()
    changes = {f.name: getattr(ns, f.name) for f in fields(defaults)}
    values = {k: v if v is not None else getattr(defaults, k) for k, v in changes.items()}
    return MagicDefaults(**values)
