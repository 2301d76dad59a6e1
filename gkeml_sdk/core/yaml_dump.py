r"""YAML of plain data (dict, list, str, int, float, bool, None) in block style, keys in
their given order, no aliases, with the bytes PyYAML's pure `SafeDumper` writes (indent 2,
width 80): written here directly for the streams whose every value this module knows how to
write, else by PyYAML itself.

Why not PyYAML, even with libyaml: most of a dump is spent outside the emitter, building and
resolving one node per value in Python (through `CSafeDumper`, 1,000 compiled jobs took 12.6x
`json.dumps` of the same data; written here, 1.2x). Each string is written as PyYAML would
write it (`core.yaml_text`), including where PyYAML folds long text past column 80;
double-quoted text that would fold (PyYAML folds it at escapes too), keys PyYAML writes after
`? `, and anything but plain data send the stream to PyYAML.

Example:
    >>> dump_all([{"kind": "A", "spec": {"on": "yes", "items": ["x", {}]}}, {"kind": "B"}])
    "kind: A\nspec:\n  'on': 'yes'\n  items:\n  - x\n  - {}\n---\nkind: B\n"
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

from gkeml_sdk.core.yaml_text import (
    FREE,
    MEMO_SIZE,
    NEVER,
    TEXTS,
    Dumper,
    LiteralDumper,
    Unwritable,
    learn,
    placed,
)

# PyYAML writes a key as a `? ` key from 128 characters, counting its tag (`!!str`) too.
_KEY_LIMIT = 128 - len("!!str")
_HEADS: dict[str, str] = {}  # keys as PyYAML writes them, with their colon


def dump_all(documents: Iterable[Any], *, literal: bool = True, native: bool = True) -> str:
    r"""`documents` as one YAML stream, keys in their given order, block style, no aliases;
    with `literal`, multi-line strings as literal blocks (`|`). `native=False` has PyYAML
    write it (tests compare the two).

    Example:
        >>> dump_all([{"kind": "A"}, {"kind": "B"}], literal=False)
        'kind: A\n---\nkind: B\n'
        >>> dump_all([{"a": "x\ny\n", "b": [1, 2.5, None, True]}])
        'a: |\n  x\n  y\nb:\n- 1\n- 2.5\n- null\n- true\n'
    """
    docs = list(documents)
    written = write_stream(docs, literal=literal) if native else None
    if written is None:
        dumper = LiteralDumper if literal else Dumper
        written = yaml.dump_all(docs, Dumper=dumper, sort_keys=False, default_flow_style=False)
    return str(written)


def write_stream(documents: list[Any], *, literal: bool) -> str | None:
    r"""The YAML stream of `documents` (each a dict), with multi-line text as literal blocks
    when `literal`; None when some value is not one this writer knows.

    Example:
        >>> write_stream([{"a": "x\ny\n"}, {}], literal=True)
        'a: |\n  x\n  y\n--- {}\n'
        >>> write_stream([{1: "an int key"}], literal=True) is None
        True
    """
    out: list[str] = []
    append, free, heads = out.append, FREE, _HEADS

    # PyYAML's layout: a mapping's keys start at its indent, a sequence inside a mapping at
    # the mapping's own indent, and a collection inside a sequence on the line of its `- `.
    # `lead` is what goes before the first key or item: its indent, or nothing after `- `.
    def mapping(data: dict[Any, Any], indent: int, lead: str) -> None:
        pad = " " * indent
        for key, value in data.items():
            head = heads.get(key) or _head(key)
            kind = type(value)
            if kind is str:
                text = free.get(value) or placed(value, indent + len(head) + 1, indent, literal)
                append(f"{lead}{head} {text}")
            elif kind is dict:
                if value:
                    append(f"{lead}{head}\n")
                    mapping(value, indent + 2, pad + "  ")
                else:
                    append(f"{lead}{head} {{}}\n")
            elif kind is list:
                if value:
                    append(f"{lead}{head}\n")
                    sequence(value, indent, pad)
                else:
                    append(f"{lead}{head} []\n")
            else:
                append(f"{lead}{head} {_scalar(value)}")
            lead = pad

    def sequence(data: list[Any], indent: int, lead: str) -> None:
        item = " " * indent + "- "
        lead += "- "
        for value in data:
            kind = type(value)
            if kind is str:
                append(lead + (free.get(value) or placed(value, indent + 2, indent, literal)))
            elif kind is dict:
                if value:
                    append(lead)
                    mapping(value, indent + 2, "")
                else:
                    append(lead + "{}\n")
            elif kind is list:
                if value:
                    append(lead)
                    sequence(value, indent + 2, "")
                else:
                    append(lead + "[]\n")
            else:
                append(lead + _scalar(value))
            lead = item

    try:
        for index, document in enumerate(documents):
            if type(document) is not dict:
                return None
            if index:
                append("---\n" if document else "--- ")
            if document:
                mapping(document, 0, "")
            else:
                append("{}\n")
    except Unwritable:
        return None
    return "".join(out)


def _head(key: Any) -> str:
    """`key:` as PyYAML writes a simple key (it never folds one)."""
    if type(key) is not str:
        raise Unwritable
    text, limit = TEXTS.get(key) or learn(key)
    if not key or len(key) >= _KEY_LIMIT or limit is None or limit == NEVER:
        raise Unwritable
    if len(_HEADS) >= MEMO_SIZE:
        _HEADS.clear()
    _HEADS[key] = head = text + ":"
    return head


def _scalar(value: Any) -> str:
    """A number, boolean or null and its line break, as PyYAML writes them."""
    kind = type(value)
    if kind is bool:
        return "true\n" if value else "false\n"
    if kind is int:
        return f"{value}\n"
    if value is None:
        return "null\n"
    if kind is float:
        return f"{_REPRESENTER.represent_float(value).value}\n"
    raise Unwritable


_REPRESENTER: Any = yaml.representer.SafeRepresenter()
