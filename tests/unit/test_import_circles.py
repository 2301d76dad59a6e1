"""No import circle inside a folder: the direct children of every package (its modules and
subpackages) import each other one way only, counting imports inside functions and under
`if TYPE_CHECKING:` (a reader follows those too). Unlike the import-linter contract, which
skips TYPE_CHECKING imports. Also: `serving/` is a few cohesive modules (issue 33)."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(
    ".".join(init.parent.relative_to(ROOT).parts)
    for top in ("gkeml_sdk", "gkeml_magics")
    for init in (ROOT / top).rglob("__init__.py")
)
# Folders that still have a circle; each leaves this list when its circle goes (the tests are
# strict xfails: a folder without a circle that is still listed fails).
NOT_YET = {
    # scheduling's job-wide checks (capacity order, placement, provisioning mode) annotate with
    # training's fields, and training builds on scheduling: they belong in training/.
    "gkeml_sdk": "scheduling's job checks take a TrainingJob",
}
SERVING_MODULES = 15


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(
        "gkeml_sdk", "gkeml_magics", exclude_type_checking_imports=False, cache_dir=None
    )


def child(package: str, module: str) -> str:
    """The direct child of `package` that holds `module`."""
    return ".".join(module.split(".")[: package.count(".") + 2])


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for after in edges.get(todo.pop(), set()) - seen:
            seen.add(after)
            todo.append(after)
    return seen


def circles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """The groups of `package`'s children that import each other in a circle, each sorted."""
    edges: dict[str, set[str]] = {}
    for module in graph.find_descendants(package):
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.startswith(package + ".") and child(package, imported) != child(
                package, module
            ):
                edges.setdefault(child(package, module), set()).add(child(package, imported))
    reach = {name: reachable(edges, name) for name in edges}
    groups = {
        frozenset(other for other in reach[name] if name in reach.get(other, set()))
        for name in edges
        if name in reach[name]
    }
    return sorted(sorted(group) for group in groups)


def import_lines(graph: grimp.ImportGraph, package: str, group: list[str]) -> list[str]:
    """`module:line  import` for every import between two members of `group`."""
    found = []
    for module in graph.find_descendants(package):
        for imported in graph.find_modules_directly_imported_by(module):
            ends = child(package, module), child(package, imported)
            if (
                imported.startswith(package + ".")
                and ends[0] != ends[1]
                and set(ends) <= set(group)
            ):
                for detail in graph.get_import_details(importer=module, imported=imported):
                    found.append((module, detail["line_number"], detail["line_contents"]))
    return [f"    {module}:{line}  {text}" for module, line, text in sorted(found)]


@pytest.mark.parametrize(
    "package",
    [
        pytest.param(
            name,
            marks=pytest.mark.xfail(
                strict=True, reason=f"{name} still has an import circle: {NOT_YET[name]}"
            ),
        )
        if name in NOT_YET
        else name
        for name in PACKAGES
    ],
)
def test_no_import_circle_inside_a_folder(graph: grimp.ImportGraph, package: str) -> None:
    found = circles(graph, package)
    report = [
        f"{len(group)} modules import each other in a circle: "
        + ", ".join(name.rsplit(".", 1)[1] for name in group)
        + "\n"
        + "\n".join(import_lines(graph, package, group))
        for group in found
    ]
    assert not found, f"import circles inside {package}:\n" + "\n".join(report)


def test_not_yet_names_only_packages() -> None:
    assert set(NOT_YET) <= set(PACKAGES)


def test_serving_is_a_few_modules() -> None:
    folder = ROOT / "gkeml_sdk" / "serving"
    modules = sorted(
        path.name
        for path in folder.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py") or (path / "__init__.py").exists()
    )
    assert len(modules) <= SERVING_MODULES, f"serving/ has {len(modules)} modules: {modules}"


BACKENDS = ROOT / "gkeml_sdk" / "backends"
KUBERNETES = BACKENDS / "kubernetes"
ROOM_MODULES = 15


@pytest.mark.parametrize(
    "folder",
    [
        p.parent
        for name in ("kubernetes", "local")
        for p in sorted((BACKENDS / name).rglob("__init__.py"))
    ],
    ids=lambda p: str(p.relative_to(BACKENDS)),
)
def test_every_room_of_the_kubernetes_and_local_backends_is_a_few_modules(folder: Path) -> None:
    modules = sorted(
        path.name
        for path in folder.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py") or (path / "__init__.py").exists()
    )
    assert len(modules) <= ROOM_MODULES, f"{folder.name}/ has {len(modules)} modules: {modules}"


def test_the_kubernetes_backend_never_names_the_backend_or_a_handle_for_types_only(
    graph: grimp.ImportGraph,
) -> None:
    """Issue 34: the per-run state lives in the run service; nothing in the backend imports
    the backend facade or the run handle under `if TYPE_CHECKING:` (a dependency it hides)."""
    plain = grimp.build_graph("gkeml_sdk", exclude_type_checking_imports=True, cache_dir=None)
    hidden = [
        f"{module} -> {imported}"
        for module in graph.find_descendants("gkeml_sdk.backends.kubernetes")
        for imported in graph.find_modules_directly_imported_by(module)
        if imported in ("gkeml_sdk.backends.kubernetes.backend", "gkeml_sdk.runs.handle")
        and imported not in plain.find_modules_directly_imported_by(module)
    ]
    assert hidden == []


def test_the_local_backend_never_names_a_handle(graph: grimp.ImportGraph) -> None:
    """Issue 34: the local run service answers with snapshots and never makes, reads or calls a
    `Run` (the `Client` makes the handles), so no module of the local backend imports it, not
    even for types."""
    naming = [
        module
        for module in graph.find_descendants("gkeml_sdk.backends.local")
        if "gkeml_sdk.runs.handle" in graph.find_modules_directly_imported_by(module)
    ]
    assert naming == []
