"""The edges (the CLI and its commands, the magics) and the examples use only the public API:
`gkeml_sdk`'s exported names and `gkeml_sdk.errors`. Nothing inside the library leans on the
top-level package, and the version has one source."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
from pathlib import Path

import pytest

import gkeml_sdk
import gkeml_sdk.errors

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "gkeml_sdk"
EDGES = [
    *sorted((SDK / "cli").glob("*.py")),
    *sorted((ROOT / "gkeml_magics").glob("*.py")),
]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
ERRORS = {
    name
    for name, value in vars(gkeml_sdk.errors).items()
    if inspect.isclass(value) and value.__module__ == "gkeml_sdk.errors"
}


def module_name(path: Path) -> str:
    """The import name of an edge or example file."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def private_uses(path: Path, *, edge: bool) -> list[str]:
    """Every import or attribute of gkeml in `path` that is not public API, as `line: what`.

    Edges may import their own siblings (the CLI its commands, a magic module another one);
    examples may not.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    own = "gkeml_sdk.cli" if path.is_relative_to(SDK) else "gkeml_magics"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: a sibling in the same edge package
                if not edge:
                    found.append(f"{node.lineno}: relative import")
                continue
            module = node.module or ""
            names = [alias.name for alias in node.names]
            if module == "gkeml_sdk":
                found += [
                    f"{node.lineno}: gkeml_sdk.{n}" for n in names if n not in gkeml_sdk.__all__
                ]
            elif module == "gkeml_sdk.errors":
                found += [f"{node.lineno}: gkeml_sdk.errors.{n}" for n in names if n not in ERRORS]
            elif module.startswith(("gkeml_sdk.", "gkeml_magics")) and not (
                edge and (module == own or module.startswith(own + "."))
            ):
                found.append(f"{node.lineno}: from {module} import {', '.join(names)}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(("gkeml_sdk.", "gkeml_magics")) and alias.name not in (
                    "gkeml_sdk.errors",
                ):
                    found.append(f"{node.lineno}: import {alias.name}")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "gkeml_sdk"
            and node.attr not in (*gkeml_sdk.__all__, "errors")
        ):
            found.append(f"{node.lineno}: gkeml_sdk.{node.attr}")
    return found


@pytest.mark.parametrize("path", EDGES + EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_edges_and_examples_use_only_public_names(path):
    assert private_uses(path, edge=path in EDGES) == [], f"{path.relative_to(ROOT)} uses internals"
    importlib.import_module(module_name(path))  # and it imports with only those


def test_the_check_sees_an_internal_import(tmp_path):
    example = tmp_path / "example.py"
    example.write_text(
        "from gkeml_sdk import Client, RunState\n"
        "from gkeml_sdk.backends.local import LocalOptions\n"
        "from gkeml_sdk import watch\n"
        "import gkeml_sdk\n"
        "gkeml_sdk.runs.handle.log_slot('x')\n"
    )
    assert private_uses(example, edge=False) == [
        "2: from gkeml_sdk.backends.local import LocalOptions",
        "3: gkeml_sdk.watch",
        "5: gkeml_sdk.runs",
    ]


def test_every_exported_name_resolves_and_has_a_docstring():
    for name in gkeml_sdk.__all__:
        value = getattr(gkeml_sdk, name)
        if name != "__version__":
            assert inspect.getdoc(value), f"gkeml_sdk.{name} has no docstring"
    assert sorted(dir(gkeml_sdk)) == sorted(gkeml_sdk.__all__)


def test_the_library_never_imports_its_own_top_level_package():
    # The top-level package is the facade for users; a layer that imports it loads them all
    # (and, from compile/, would point the one-way flow backwards).
    edges = {SDK / "__init__.py", *EDGES}
    offenders = []
    for path in sorted(SDK.rglob("*.py")):
        if path in edges:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "gkeml_sdk" and not node.level:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Import) and any(a.name == "gkeml_sdk" for a in node.names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_the_version_has_one_source():
    from gkeml_sdk.version import __version__

    assert gkeml_sdk.__version__ == __version__ == importlib.metadata.version("gkeml")
