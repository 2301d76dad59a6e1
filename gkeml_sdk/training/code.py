"""User code that travels with a job as files (a notebook cell, a function, a script and its
neighbours): syntax and size checks, and names derived from the content."""

from __future__ import annotations

import ast
import dis
import hashlib
import inspect
import json
import re
import textwrap
import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from gkeml_sdk.core.apimachinery import (
    DNS1123_SUBDOMAIN_MAX,
    config_map_key_errors,
    volume_item_path_errors,
)
from gkeml_sdk.core.environment import CODE_METADATA_ALLOWANCE, CONFIGMAP_MAX_BYTES
from gkeml_sdk.core.model import fail
from gkeml_sdk.errors import excerpt

ENTRYPOINT = "main.py"
ARGS_FILE = "gkeml_args.json"
_PATH_SEGMENT = re.compile(r"^[-._a-zA-Z0-9]+\Z")
_NAME_CHARS = re.compile(r"[^a-z0-9-]+")


def check_files(files: Mapping[str, str]) -> None:
    """Reject paths a ConfigMap cannot carry and payloads above its size limit.

    Example:
        >>> check_files({"main.py": "print(1)", "pkg/util.py": ""})
        >>> check_files({"../x.py": ""})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: file path '../x.py' is not allowed (rule: ...
    """
    keys: dict[str, str] = {}
    total = 0
    for path, text in files.items():
        segments = path.split("/")
        if any(s in ("", ".", "..") or not _PATH_SEGMENT.match(s) for s in segments):
            raise fail(
                f"file path {path!r} is not allowed",
                rule="code files are relative paths of letters, digits, '-', '_', '.' below "
                "the code directory",
                fix="e.g. files={'main.py': ..., 'pkg/util.py': ...}",
                field="files",
            )
        refused = volume_item_path_errors(path)
        if refused:
            raise fail(
                f"file path {excerpt(repr(path), 80)} {'; '.join(refused)}",
                rule="code files are mounted as ConfigMap volume items, whose paths the API "
                "server refuses when they start with '..' (the kubelet's own '..data' links)",
                fix="rename it without the leading '..'",
                field="files",
            )
        key = config_map_key(path)
        problems = config_map_key_errors(key)
        if problems:
            raise fail(
                f"file path {excerpt(repr(path), 80)} makes ConfigMap key "
                f"{excerpt(repr(key), 80)}, which {'; '.join(problems)}",
                rule="code files travel as ConfigMap keys: 'file.' and the path with '/' written "
                "as '__', "
                f"at most {DNS1123_SUBDOMAIN_MAX} characters",
                fix="shorten the path",
                field="files",
            )
        if key in keys:
            raise fail(
                f"file paths {keys[key]!r} and {path!r} map to the same ConfigMap key {key!r}",
                rule="a ConfigMap key is the path with '/' written as '__'",
                fix="rename one of the files",
                field="files",
            )
        keys[key] = path
        total += len(key) + len(text.encode())
    limit = CONFIGMAP_MAX_BYTES - CODE_METADATA_ALLOWANCE
    if total > limit:
        raise fail(
            f"code files total {total / 1024:.0f} KiB, above the {limit // 1024} KiB that fit "
            "in one ConfigMap",
            rule="Kubernetes stores an object of at most 1 MiB, and code travels in a ConfigMap",
            fix="bake the code into the image (image=...), or put data and large files in a "
            "bucket (gs://...) and read them at run time",
            field="files",
        )


CODE_KEY_PREFIX = "file."  # no key of the run record starts so ("files.json" does not)


def config_map_key(path: str) -> str:
    """The ConfigMap key of a code file in the run record's ConfigMap (keys cannot hold '/').

    Example:
        >>> config_map_key("pkg/util.py")
        'file.pkg__util.py'
    """
    return CODE_KEY_PREFIX + legacy_config_map_key(path)


def legacy_config_map_key(path: str) -> str:
    """The key a code file had in the separate `<run>-code` ConfigMap of record schemas 1-2."""
    return path.replace("/", "__")


def code_files(source: str, filename: str = ENTRYPOINT) -> dict[str, str]:
    """`{filename: source}` once `source` compiles; a SyntaxError becomes a one-line SpecError.

    Example:
        >>> code_files("print('hi')")
        {'main.py': "print('hi')"}
    """
    check_syntax(source, filename)
    return {filename: source}


def check_syntax(source: str, filename: str) -> None:
    """Compile `source` without running it; raise a SpecError naming the line on failure."""
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        shown = f": {line}" if line else ""
        raise fail(
            f"{filename} line {exc.lineno}: {exc.msg}{shown}",
            rule="the code runs as a Python file, so it must compile",
            fix="fix the line above; IPython magics (%...) and shell escapes (!...) are not "
            "Python and do not work inside a job",
            field="files",
        ) from None


def function_files(fn: Callable[..., Any], kwargs: Mapping[str, Any] | None) -> dict[str, str]:
    """A self-contained `main.py` that defines `fn` and calls it with `kwargs` (from JSON).

    Example:
        >>> def train(steps: int) -> None:
        ...     print(steps)
        >>> sorted(function_files(train, {"steps": 3}))  # doctest: +SKIP
        ['gkeml_args.json', 'main.py']
    """
    if not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>":
        raise fail(
            f"{fn!r} is not a plain function",
            rule="from_function ships the source of a `def` function",
            fix="define the training code with `def train(...):` at the top level",
        )
    if inspect.iscoroutinefunction(fn):
        raise fail(
            f"{fn.__name__} is async",
            rule="the job calls the function directly",
            fix="make it a plain `def` function",
        )
    if fn.__code__.co_freevars:
        raise fail(
            f"{fn.__name__} uses variables of its enclosing function: "
            f"{', '.join(fn.__code__.co_freevars)}",
            rule="only the function's own source is shipped to the job",
            fix="pass them as kwargs=..., or define the function at the top level",
        )
    outside = sorted(_global_names(fn.__code__) & (set(fn.__globals__) - {fn.__name__}))
    if outside:
        raise fail(
            f"{fn.__name__} uses names defined outside it: {', '.join(outside)}",
            rule="only the function's own source is shipped; module imports and notebook "
            "variables are not",
            fix="import modules inside the function and pass values as kwargs=...",
        )
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        raise fail(
            f"the source of {fn.__name__} is not available",
            rule="from_function reads the function's source file",
            fix="use TrainingJob.from_code(...) with the code as text, or from_script(...)",
        ) from None
    source = _without_decorators(source, fn.__name__)
    try:
        encoded = json.dumps(dict(kwargs or {}), sort_keys=True, indent=1)
    except TypeError as exc:
        raise fail(
            f"kwargs of {fn.__name__} are not JSON: {exc}",
            rule="arguments travel to the job as a JSON file",
            fix="pass numbers, strings, lists and dicts; load larger objects inside the function",
        ) from None
    main = (
        f"{source.rstrip()}\n\n\n"
        'if __name__ == "__main__":\n'
        "    import json as _json\n"
        "    import pathlib as _pathlib\n\n"
        f"    _kwargs = _json.loads((_pathlib.Path(__file__).parent / {ARGS_FILE!r}).read_text())\n"
        f"    {fn.__name__}(**_kwargs)\n"
    )
    check_syntax(main, ENTRYPOINT)
    return {ENTRYPOINT: main, ARGS_FILE: encoded + "\n"}


def script_files(script: str | Path, include: Iterable[str]) -> tuple[dict[str, str], str]:
    """The script and every file matching `include` (globs relative to the script's folder).

    Returns the files and the script's path among them.

    Example:
        >>> script_files("examples/quickstart.py", ["*.py"])[1]  # doctest: +SKIP
        'quickstart.py'
    """
    path = Path(script)
    if not path.is_file():
        raise fail(f"script {str(script)!r} does not exist", fix="pass the path of a .py file")
    root = path.resolve().parent
    found = {path.resolve(), *(p.resolve() for g in include for p in root.glob(g))}
    files: dict[str, str] = {}
    for item in sorted(found):
        if not item.is_file() or "__pycache__" in item.parts or item.suffix == ".pyc":
            continue
        rel = item.relative_to(root).as_posix()
        try:
            files[rel] = item.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise fail(
                f"{rel} is not a UTF-8 text file",
                rule="code travels as text in a ConfigMap",
                fix="exclude it from include=, bake it into the image, or put it in a bucket",
                field="files",
            ) from None
    entry = path.resolve().relative_to(root).as_posix()
    check_syntax(files[entry], entry)
    return files, entry


def derived_name(prefix: str, payload: Mapping[str, Any]) -> str:
    """A stable job name: a sanitised prefix and a hash of the job's content.

    Example:
        >>> derived_name("Train LLM", {"a": 1})
        'train-llm-f9d86028'
    """
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:8]
    stem = _NAME_CHARS.sub("-", prefix.lower()).strip("-")[:31].strip("-") or "job"
    if not stem[0].isalpha():
        stem = f"job-{stem}"[:31].strip("-")
    return f"{stem}-{digest}"


def _global_names(code: types.CodeType) -> set[str]:
    # LOAD_GLOBAL names only; attribute names share co_names and must not count.
    names = {
        ins.argval
        for ins in dis.get_instructions(code)
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _without_decorators(source: str, name: str) -> str:
    # The job calls the function itself; a decorator (often a notebook helper) is not shipped.
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = source.splitlines(keepends=True)
    return "".join(lines[node.lineno - 1 :])
