"""`gkeml catalog gpus|tpus`: the hardware catalog as tables."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

from gkeml_sdk import PriceBook, gpu_models, price_table, tpu_generations


def register(commands: Any) -> None:
    """Add `catalog` to the CLI."""
    catalog = commands.add_parser("catalog", help="print GPU or TPU catalog tables")
    catalog.add_argument(
        "what", choices=("gpus", "tpus", "where"), help="the GPU or the TPU table, or `where NAME`"
    )
    catalog.add_argument("name", nargs="?", help="where: the GPU or TPU (h200, v5e, ...)")
    catalog.add_argument("--prices", metavar="FILE", help="YAML/JSON price overrides")
    catalog.set_defaults(handler=_catalog)


def _catalog(args: argparse.Namespace) -> int:
    if args.what == "where" or args.name:
        return _where(args)
    book = PriceBook.from_file(args.prices) if args.prices else PriceBook.default()
    rows = _gpu_rows(book) if args.what == "gpus" else _tpu_rows(book)
    print(format_table(rows))
    print(f"\nprices per accelerator-hour: {book.source}, as of {book.as_of}")
    print("~ an estimate (how: gkeml_sdk.price_table()); n/o not offered")
    return 0


def _where(args: argparse.Namespace) -> int:
    from gkeml_sdk.cli.catalog_where import where_report

    if args.what != "where" or not args.name:
        args.command_parser.error("name a GPU or TPU after `where` only: gkeml catalog where h200")
    heading, rows, lines = where_report(args.name)
    print(heading)
    if rows:
        print(f"\n{format_table(rows)}\n")
    print("\n".join(lines))
    return 0


def _cells(book: PriceBook, key: str) -> list[str]:
    """On-demand, Spot and flex-start of `key`: `~` marks an estimate, `n/o` a mode not
    offered."""
    cells = [cell for cell in price_table(book) if cell.key == key]
    return [
        "n/o" if c.value is None else f"{'~' if c.is_estimate else ''}{c.value:.2f}" for c in cells
    ]


def _first(items: Iterable[str], limit: int = 5) -> str:
    shown = list(items)
    more = f",+{len(shown) - limit}" if len(shown) > limit else ""
    return ",".join(shown[:limit]) + more or "-"


def _gpu_rows(book: PriceBook) -> list[list[str]]:
    rows = [
        [
            "name",
            "gke-accelerator",
            "mem GB",
            "GPUs/node",
            "machine types",
            "MIG",
            "arch",
            "$/h",
            "spot $/h",
            "flex $/h",
        ]
    ]
    for gpu in gpu_models():
        machines = sorted({m.name.rsplit("-", 1)[0] for m in gpu.machine_types})
        rows.append([
            gpu.key, gpu.label, str(gpu.memory_gb), "/".join(map(str, gpu.counts)),
            ",".join(machines), _first(p for p, _ in gpu.mig_profiles), gpu.arch,
            *_cells(book, gpu.key),
        ])  # fmt: skip
    return rows


def _tpu_rows(book: PriceBook) -> list[list[str]]:
    rows = [
        [
            "name",
            "gke-tpu-accelerator",
            "form",
            "single-host",
            "multi-host (hosts)",
            "HBM GB",
            "$/chip-h",
            "spot",
            "flex",
        ]
    ]
    for tpu in tpu_generations():
        multi = [t for t in tpu.topologies() if tpu.hosts(t) > 1][:4]
        rows.append([
            tpu.key, tpu.label, "AxB" if tpu.dims == 2 else "AxBxC",
            ",".join(t for t, _, _ in tpu.single_host),
            ",".join(f"{t}({tpu.hosts(t)})" for t in multi) + ",...", str(tpu.hbm_gb),
            *_cells(book, tpu.key),
        ])  # fmt: skip
    return rows


def format_table(rows: list[list[str]]) -> str:
    """Rows as aligned columns; the first row is the header.

    Example:
        >>> print(format_table([["a", "bb"], ["ccc", "d"]]))
        a    bb
        ccc  d
    """
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
