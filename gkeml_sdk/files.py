"""Loading specs from files: a YAML spec, or a Python file that defines them at module level."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from gkeml_sdk.core.spec_text import load_yaml_all, read_spec_file
from gkeml_sdk.errors import GkemlError, SpecError, excerpt
from gkeml_sdk.training.model import TrainingJob

SPEC_KINDS = ("TrainingJob", "ServeModel", "Tenant")
T = TypeVar("T")


def load_specs(path: str | Path) -> list[Any]:
    """Every spec object in `path`: YAML documents with `kind: TrainingJob|ServeModel|Tenant`
    (kind defaults to TrainingJob), or the TrainingJob/ServeModel/Tenant objects a Python file
    defines at module level.

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        ...     _ = f.write("name: demo\\nimage: python:3.12\\ncommand: [python, -V]\\n")
        >>> specs = load_specs(f.name)
        >>> specs[0].name, len(specs)
        ('demo', 1)
        >>> os.unlink(f.name)
    """
    file = _existing(path)
    if file.suffix == ".py":
        return _from_python(file)
    if file.suffix in (".yaml", ".yml", ".json"):
        return _from_yaml(file)
    raise SpecError(
        f"{file}: unsupported file type {file.suffix!r}",
        rule="specs are YAML (kind: TrainingJob or ServeModel) or Python files",
        fix="rename it to .yaml/.yml or .py",
    )


def python_objects(path: str | Path, kind: type[T]) -> list[T]:
    """The `kind` objects a Python file defines at module level, alone or in a list
    (`POOLS = [NodePool(...), ...]`): how `gkeml setup plan setup.py` and
    `gkeml nodepool plan pools.py` read the Python examples.

    Example:
        >>> from gkeml_sdk import ClusterSetup
        >>> [type(s).__name__ for s in python_objects("examples/setup_cluster.py", ClusterSetup)]
        ['ClusterSetup']
    """
    file = _existing(path)
    found: list[T] = []
    for value in _run_python(file).values():
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, kind) and item not in found:
                found.append(item)
    if not found:
        raise SpecError(
            f"{file}: defines no {kind.__name__} at module level",
            fix=f"assign it to a module-level name, e.g. x = {kind.__name__}(...)",
        )
    return found


def _existing(path: str | Path) -> Path:
    file = Path(path)
    try:
        found, directory, exists = file.is_file(), file.is_dir(), file.exists()
    except OSError:  # a name longer than the file system allows, and the like
        found = directory = exists = False
    if directory:
        raise SpecError(
            f"{excerpt(str(file))}: a directory, not a file",
            fix="pass a .yaml spec or a .py file inside it",
        )
    if not found:
        missing = "no such file"
        if exists:  # /dev/zero, a FIFO: reading it might never end
            missing = "not a regular file (a device, pipe or socket)"
        raise SpecError(
            f"{excerpt(str(file))}: {missing}",
            fix="pass a .yaml spec or a .py file that defines a job",
        )
    return file


def _from_yaml(file: Path) -> list[Any]:
    _, text = read_spec_file(file, fix="pass a .yaml spec")
    documents = [d for d in load_yaml_all(text, str(file)) if d is not None]
    specs = []
    for document in documents:
        if not isinstance(document, dict):
            raise SpecError(f"{file}: each YAML document must be a mapping of spec fields")
        kind = document.pop("kind", "TrainingJob")
        if not isinstance(kind, str):
            raise SpecError(f"{file}: kind {kind!r} is not a name", fix="kind: TrainingJob")
        specs.append(_spec_class(kind, file).model_validate(document))
    if not specs:
        raise SpecError(f"{file}: no spec found", fix="add `name: ...` and the job's fields")
    return specs


def _spec_class(kind: str, file: Path) -> Any:
    if kind == "TrainingJob":
        return TrainingJob
    if kind == "ServeModel":
        from gkeml_sdk.serving.model import ServeModel

        return ServeModel
    if kind == "Tenant":
        from gkeml_sdk.tenancy.model import Tenant

        return Tenant
    raise SpecError(f"{file}: unknown kind {kind!r}", fix=f"kind: one of {', '.join(SPEC_KINDS)}")


def _from_python(file: Path) -> list[Any]:
    namespace = _run_python(file)
    found: list[Any] = []
    for value in namespace.values():
        if type(value).__name__ in SPEC_KINDS and value not in found:
            found.append(value)
    if not found:
        raise SpecError(
            f"{file}: defines no TrainingJob or ServeModel at module level",
            fix="assign the spec to a module-level name, e.g. job = TrainingJob(...)",
        )
    return found


def _run_python(file: Path) -> dict[str, Any]:
    import runpy  # only a .py spec needs it

    # Run as a module named for the file (not __main__), so example scripts only define.
    try:
        namespace = runpy.run_path(str(file), run_name=f"gkeml_spec_{file.stem}")
    except GkemlError:
        raise
    except SyntaxError as exc:
        raise SpecError(
            f"{file}: not valid Python at line {exc.lineno}: {excerpt(exc.msg)}",
            fix="fix the syntax there (`python -m py_compile FILE` shows it too)",
        ) from None
    except (Exception, SystemExit) as exc:  # the module failed (or exited) as it ran
        raise SpecError(
            f"{file}: running it raised {type(exc).__name__}{_line_in(file, exc)}: "
            f"{excerpt(str(exc))}",
            rule="a .py spec file is run to find the specs it defines",
            fix=f"run `python {file}` to see the full traceback",
        ) from None
    return namespace


def _line_in(file: Path, exc: BaseException) -> str:
    import traceback  # only a failing .py spec needs it

    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(file)]
    return f" at line {lines[-1]}" if lines else ""
