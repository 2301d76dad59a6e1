"""The translation of parsed magic options into public SDK objects, and the per-shell defaults."""

from __future__ import annotations

import argparse
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


def job_fields(ns: argparse.Namespace, defaults: MagicDefaults) -> dict[str, Any]:
    """TrainingJob keyword arguments from parsed options; unset options are left out so the
    spec's own defaults and derivations apply.

    Example:
        >>> from gkeml_magics.parsers import parse, train_parser
        >>> f = job_fields(parse(train_parser(), "--gpu l4:2 --spot"), MagicDefaults())
        >>> f["accelerator"], f["spot"]
        (Accelerator('l4', count=2), True)
    """
    out: dict[str, Any] = {"spot": ns.spot}
    accelerator = _accelerator(ns)
    if accelerator is not None:
        out["accelerator"] = accelerator
    for key in ("nodes", "procs_per_node", "cpu", "memory", "provisioning", "network"):
        if getattr(ns, key) is not None:
            out[key] = getattr(ns, key)
    if ns.gang is not None:
        out["gang"] = ns.gang
    for key in ("queue", "priority", "namespace", "image"):
        value = getattr(ns, key, None) or getattr(defaults, key)
        if value:
            out[key] = value
    if "env" in ns:
        out["env"] = dict(_key_value(item) for item in ns.env)
        out["secret_env"] = dict(_key_value(item, "--secret-env") for item in ns.secret_env)
        out["max_restarts"] = ns.max_restarts
        for key in ("checkpoint_dir", "max_runtime"):
            if getattr(ns, key) is not None:
                out[key] = getattr(ns, key)
    return out


def train_job(ns: argparse.Namespace, defaults: MagicDefaults, cell: str) -> TrainingJob:
    """The TrainingJob of a `%%gke_train` cell: the cell is `main.py`, `--file`s travel with it.

    Example:
        >>> from gkeml_magics.parsers import parse, train_parser
        >>> ns = parse(train_parser(), "--nodes 2 --name demo")
        >>> train_job(ns, MagicDefaults(), "print(1)").files
        {'main.py': 'print(1)'}
    """
    fields_ = job_fields(ns, defaults)
    files = {}
    for item in ns.file:
        path = Path(item)
        try:
            files[path.name if path.is_absolute() else path.as_posix()] = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise OptionError(f"%%gke_train: --file {item}: {exc}") from None
    if files:
        fields_["files"] = files
    return TrainingJob.from_code(cell, name=ns.name, **fields_)


def local_options(ns: argparse.Namespace) -> LocalOptions:
    """LocalOptions of a `%%gke_train --local` cell."""
    return LocalOptions(chaos_after=ns.chaos)


def _accelerator(ns: argparse.Namespace) -> Accelerator | TpuSlice | None:
    if ns.gpu and ns.tpu:
        raise OptionError("use either --gpu or --tpu: a node has GPUs or TPU chips, not both")
    if ns.mig and not ns.gpu:
        raise OptionError("--mig needs --gpu MODEL, e.g. --gpu a100:1 --mig 1g.5gb")
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
