"""Modules stay small enough to read in one sitting: one job each, at most 300 lines."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 300


def test_no_module_is_over_300_lines() -> None:
    sizes = {
        path.relative_to(ROOT).as_posix(): len(path.read_text().splitlines())
        for folder in ("gkeml_sdk", "gkeml_magics")
        for path in (ROOT / folder).rglob("*.py")
    }
    too_long = {name: lines for name, lines in sizes.items() if lines > LIMIT}
    assert not too_long, f"split these by job (limit {LIMIT} lines): {too_long}"
