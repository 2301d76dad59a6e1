"""The house by feature: folder and file names a reader (and a structure tool) can trust."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("gkeml_sdk", "gkeml_magics")
# The file roles every feature folder uses; only these, and __init__.py, may repeat.
# fields.py holds a feature's fields below its rules and builders (model.py subclasses it).
ROLES = {"__init__.py", "catalog.py", "fields.py", "model.py", "rules.py", "manifests.py"}
TEST_LIKE = {"spec", "specs", "test", "tests"}


def _modules() -> list[Path]:
    return [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]


def test_no_package_folder_reads_as_a_test_folder() -> None:
    folders = {p.parent.relative_to(ROOT).as_posix() for p in _modules()}
    test_like = sorted(f for f in folders if set(f.split("/")) & TEST_LIKE)
    assert not test_like, f"tools and readers take these for test folders: {test_like}"


def test_no_two_modules_share_a_file_name_outside_the_roles() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in _modules():
        by_name[path.name].append(path.relative_to(ROOT).as_posix())
    shared = {n: paths for n, paths in by_name.items() if len(paths) > 1 and n not in ROLES}
    assert not shared, f"give each module a name of its own: {shared}"


def test_every_package_folder_is_importable() -> None:
    folders = {p.parent for p in _modules()}
    missing = sorted(
        f.relative_to(ROOT).as_posix() for f in folders if not (f / "__init__.py").exists()
    )
    assert not missing, f"add an __init__.py with a docstring: {missing}"
