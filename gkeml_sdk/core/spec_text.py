"""Reading what a user wrote: spec files of bounded size, and YAML through libyaml when it is
installed, with bounded alias expansion and errors that quote a bounded excerpt."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gkeml_sdk.errors import SpecError, excerpt

# A spec, a setup or a node pool file is a few kilobytes; 4 MiB is far above any real one
# and keeps a mistaken path (a dataset, /dev/zero's cousins) from filling memory.
MAX_SPEC_BYTES = 4 * 1024 * 1024
# Aliases may repeat a few shared blocks; an "alias bomb" (each level repeating the last
# nine times) expands to 9**N nodes from a few hundred bytes, and one long string aliased
# thousands of times to gigabytes: both are counted as written out, nodes and characters.
MAX_ALIAS_NODES = 10_000
MAX_EXPANDED_CHARS = MAX_SPEC_BYTES
# Kubernetes objects nest about 15 levels; libyaml composes recursively in C, where a
# document nested 100,000 levels deep ends the process instead of raising.
MAX_DEPTH = 100
_OPENERS = ("[", "{", "-", ":", "?")  # each level of nesting starts with one of these


def load_yaml(text: str, where: str) -> Any:
    """The first YAML document of `text`, or a `SpecError` saying where it is wrong.

    Example:
        >>> load_yaml("name: [a", "job.yaml")
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: job.yaml: not valid YAML at line 1, column 9: ...
    """
    return _parse(text, where, lambda loader: loader.get_single_data())


def load_yaml_all(text: str, where: str) -> list[Any]:
    """Every document of a YAML stream, with `load_yaml`'s errors.

    Example:
        >>> load_yaml_all("a: 1\\n---\\nb: 2\\n", "two.yaml")
        [{'a': 1}, {'b': 2}]
    """

    def documents(loader: Any) -> list[Any]:
        found = []
        while loader.check_node():
            found.append(loader.get_data())
        return found

    result: list[Any] = _parse(text, where, documents)
    return result


def read_spec_file(path: str | Path, fix: str) -> tuple[Path, str]:
    """The path and UTF-8 text of a spec file; a `SpecError` when it is missing (`fix` says
    what to pass instead), unreadable, larger than `MAX_SPEC_BYTES`, or not UTF-8.

    Example:
        >>> read_spec_file("no-such.yaml", fix="pass a setup file")
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: no-such.yaml: no such file. Try: pass a setup file
    """
    file = Path(path)
    try:
        if not file.is_file():
            what = "no such file"
            if file.is_dir():
                what = "a directory, not a file"
            elif file.exists():
                what = "not a regular file (a device, pipe or socket)"
            raise SpecError(f"{excerpt(str(file))}: {what}", fix=fix)
        with file.open("rb") as stream:
            # Read one byte past the limit: a size from stat() can lie (/proc, growing files).
            data = stream.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise SpecError(
            f"{excerpt(str(file))}: cannot read it ({exc.strerror or type(exc).__name__})",
            fix=fix,
        ) from None
    if len(data) > MAX_SPEC_BYTES:
        raise _too_large(str(file))
    try:
        return file, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            f"{excerpt(str(file))}: not UTF-8 text (byte {exc.start})", fix="save it as UTF-8"
        ) from None


def _parse(text: str, where: str, read: Callable[[Any], Any]) -> Any:
    import yaml

    where = excerpt(where)
    if len(text) > MAX_SPEC_BYTES:
        raise _too_large(where)
    fast, pure = _loader_classes()
    _check_depth(text, where, fast)
    if fast is not pure:
        try:
            return _read(fast, text, read)
        except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
            pass
    # libyaml and PyYAML's own parser accept the same documents but word and place some errors
    # differently (and libyaml refuses "\ud800" escapes outright): the pure parser, reached
    # only for broken input, makes every error and result the same whichever is installed.
    return _explain(where, pure, text, read)


def _read(loader_class: type[Any], text: str, read: Callable[[Any], Any]) -> Any:
    loader = loader_class(text)
    try:
        return read(loader)
    finally:
        loader.dispose()


def _explain(where: str, loader_class: type[Any], text: str, read: Callable[[Any], Any]) -> Any:
    import yaml

    try:
        return _read(loader_class, text, read)
    except SpecError as exc:  # from the composed-document check: say which input
        raise SpecError(f"{where}: {exc.what}", rule=exc.rule, fix=exc.fix) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError(
            f"{where}: not valid YAML{at}: {excerpt(problem)}",
            rule="specs are YAML mappings of field: value",
            fix="fix the YAML syntax there (quote values that contain ': ' or start with a "
            "special character)",
        ) from None
    except (ValueError, OverflowError) as exc:
        # The constructors' own limits: an int of more than 4,300 digits, a date like
        # 2024-13-45. Their first clause quotes no input (the rest is advice for Python).
        raise SpecError(
            f"{where}: a value cannot be read ({excerpt(str(exc).split(': ')[0])})",
            rule="numbers have at most 4,300 digits and dates are real dates",
            fix="quote the value to keep it as text, or correct it",
        ) from None
    except RecursionError:
        raise _too_deep(where) from None


def _too_deep(where: str) -> SpecError:
    return SpecError(
        f"{where}: YAML nested more than {MAX_DEPTH} levels deep",
        rule=f"values nest at most {MAX_DEPTH} lists or mappings deep",
        fix="a spec is a flat mapping of fields with short lists and mappings",
    )


def _check_depth(text: str, where: str, loader_class: type[Any]) -> None:
    """Refuse YAML nested deeper than `MAX_DEPTH`, from libyaml's events (which it reads with
    a stack of its own, not by recursion), before anything composes it."""
    if sum(text.count(mark) for mark in _OPENERS) <= MAX_DEPTH:
        return  # cannot be that deep: no second reading of an ordinary spec
    import yaml

    loader = loader_class(text)
    depth = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _too_deep(where)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return  # broken before it got that deep: the reading says where
    finally:
        loader.dispose()


def _too_large(where: str) -> SpecError:
    return SpecError(
        f"{where}: larger than {MAX_SPEC_BYTES // (1024 * 1024)} MiB",
        rule=f"spec files are read whole, up to {MAX_SPEC_BYTES} bytes",
        fix="check the path; a spec file is a few kilobytes",
    )


@functools.cache
def _loader_classes() -> tuple[type[Any], type[Any]]:
    """SafeLoader's results through libyaml's parser (when PyYAML was built with it) and
    through PyYAML's own, each checking every composed document before it is constructed."""
    import yaml

    def bounded(base: type[Any], libyaml: bool) -> type[Any]:
        class BoundedLoader(base):  # type: ignore[misc]
            def get_single_node(self) -> Any:
                node = super().get_single_node()
                if node is not None:
                    _check_composed(node, libyaml)
                return node

            def get_node(self) -> Any:
                node = super().get_node()
                if node is not None:
                    _check_composed(node, libyaml)
                return node

        return BoundedLoader

    pure = bounded(yaml.SafeLoader, libyaml=False)
    return (bounded(yaml.CSafeLoader, libyaml=True) if yaml.__with_libyaml__ else pure), pure


class _AskThePureReader(ValueError):
    """libyaml composed a node that PyYAML's own reader resolves differently."""


def _check_composed(root: Any, libyaml: bool = False) -> None:
    """Refuse, before anything is constructed, a document whose aliases expand it beyond
    `MAX_ALIAS_NODES` extra nodes or `MAX_EXPANDED_CHARS` characters of values, or refer to
    themselves; a mapping that repeats a key (YAML readers disagree on which one wins); and
    text no API server stores (lone UTF-16 surrogates from `"\\ud800"` escapes). Linear in
    the nodes as written: each shared node's expanded size is counted once."""
    expanded: dict[int, tuple[int, int]] = {}  # node -> (nodes, characters) written out
    unique = 0
    stack: list[tuple[Any, bool]] = [(root, False)]
    open_nodes: set[int] = set()
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            sizes = [expanded[id(child)] for child in _children(node)]
            expanded[key] = (1 + sum(n for n, _ in sizes), sum(c for _, c in sizes))
            continue
        if key in expanded:
            continue
        if key in open_nodes:
            raise _alias_error(node, "an alias refers to a node that contains it")
        unique += 1
        if isinstance(node.value, str):
            if any("\ud800" <= char <= "\udfff" for char in node.value):
                raise _surrogate_error(node)
            if libyaml and not node.value and not node.style and node.tag.endswith(":str"):
                # `key: !` is '' through libyaml and None through PyYAML (`!!str` is '' in
                # both): PyYAML's answer, so that both readers give the same results.
                raise _AskThePureReader
            expanded[key] = (1, len(node.value))
            continue
        if node.value and isinstance(node.value[0], tuple):
            _check_keys_once(node)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in expanded)
    nodes, chars = expanded[id(root)]
    if nodes - unique > MAX_ALIAS_NODES:
        raise _alias_error(root, f"aliases expand it by {nodes - unique} nodes")
    if chars > MAX_EXPANDED_CHARS:
        raise _alias_error(root, f"aliases expand its values to {chars:,} characters")


def _check_keys_once(mapping: Any) -> None:
    """Refuse a mapping that names a key twice (`<<` merges may repeat: explicit keys win)."""
    seen: dict[tuple[str, str], Any] = {}
    for key_node, _ in mapping.value:
        if not isinstance(key_node.value, str) or key_node.tag.endswith(":merge"):
            continue
        found = (key_node.tag, key_node.value)
        if found in seen:
            first = seen[found].start_mark.line + 1
            raise SpecError(
                f"YAML mapping at line {mapping.start_mark.line + 1}: key "
                f"{excerpt(key_node.value)!r} appears twice (lines {first} and "
                f"{key_node.start_mark.line + 1})",
                rule="a key names one field; YAML readers disagree on which repeat wins, so "
                "gkeml reads neither",
                fix=f"keep one {excerpt(key_node.value)}: line",
            )
        seen[found] = key_node


def _children(node: Any) -> list[Any]:
    if isinstance(node.value, str):
        return []
    if node.value and isinstance(node.value[0], tuple):
        return [part for pair in node.value for part in pair]
    return list(node.value)


def _alias_error(node: Any, what: str) -> SpecError:
    mark = node.start_mark
    return SpecError(
        f"YAML document at line {mark.line + 1}: {what}",
        rule=f"aliases (*name) may add at most {MAX_ALIAS_NODES} nodes to a document, and its "
        f"values, written out, hold at most {MAX_EXPANDED_CHARS:,} characters",
        fix="write the repeated values out, or repeat fewer of them",
    )


def _surrogate_error(node: Any) -> SpecError:
    mark = node.start_mark
    return SpecError(
        f"YAML value at line {mark.line + 1}, column {mark.column + 1}: a \\ud800-\\udfff "
        "escape is half of a UTF-16 pair, not a character",
        rule="Kubernetes stores text as UTF-8, which has no lone surrogates",
        fix="write the character itself, or its \\U######## escape",
    )
