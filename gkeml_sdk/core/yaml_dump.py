r"""YAML of plain data (dict, list, str, int, float, bool, None) through libyaml: PyYAML's
`CSafeDumper` when PyYAML was built with it, else the pure `SafeDumper`, with the same bytes.

Two things cost more than libyaml's emitter itself and are done here instead: building the
node tree (PyYAML's representer dispatches and tracks aliases per value; plain data needs
neither, and aliases are never written) and resolving each scalar's implicit tag (a regular
expression per scalar, memoised: the result depends on the text only). Documents where the
two emitters are known to write different bytes go to the pure emitter (`_Nodes.pure_only`).

Example:
    >>> dump_all([{"a": "x\ny\n", "b": [1, 2.5, None, True]}])
    'a: |\n  x\n  y\nb:\n- 1\n- 2.5\n- null\n- true\n'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_STR, _INT = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int"
_BOOL, _NULL = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
# What libyaml and the pure emitter both write alike: printable ASCII and line breaks.
_ASCII = re.compile(r"[\x20-\x7e\n]*\Z")


def dump_all(documents: Iterable[Any], *, literal: bool = True, native: bool = True) -> str:
    r"""`documents` as one YAML stream, keys in their given order, block style, no aliases;
    with `literal`, multi-line strings as literal blocks (`|`). `native=False` forces the pure
    emitter (tests compare the two).

    Example:
        >>> dump_all([{"kind": "A"}, {"kind": "B"}], literal=False)
        'kind: A\n---\nkind: B\n'
    """
    docs = list(documents)
    if native and yaml.__with_libyaml__:
        build = _Nodes(literal)
        nodes = [build.node(doc) for doc in docs]
        if not build.pure_only:
            return str(yaml.serialize_all(nodes, Dumper=_dumper(literal, True)))
    dumper = _dumper(literal, False)
    return str(yaml.dump_all(docs, Dumper=dumper, sort_keys=False, default_flow_style=False))


class _Nodes:
    """Builds the node tree PyYAML's SafeRepresenter would (block style, no aliases) and
    notes whether some value is one the emitters write differently, found by the property
    test (`pure_only`): a key that is empty, multi-line or over 100 characters (libyaml
    writes some as simple keys, the pure emitter as `? ` keys), some multi-line text
    (`_apart`), text with characters other than printable ASCII and line breaks (they fold
    escaped double-quoted lines differently), and any type but plain data's."""

    def __init__(self, literal: bool) -> None:
        self.literal = literal
        self.pure_only = False

    def node(self, data: Any) -> Node:
        kind = type(data)
        if kind is str:
            multi_line = "\n" in data
            if (multi_line and _apart(data)) or not _ASCII.match(data):
                self.pure_only = True
            return ScalarNode(_STR, data, style="|" if self.literal and multi_line else None)
        if kind is dict:
            pairs = []
            for key, value in data.items():
                if type(key) is str and (not key or len(key) > 100 or "\n" in key):
                    self.pure_only = True
                pairs.append((self.node(key), self.node(value)))
            return MappingNode(_MAP, pairs, flow_style=False)
        if kind is list:
            return SequenceNode(_SEQ, [self.node(v) for v in data], flow_style=False)
        if kind is bool:
            return ScalarNode(_BOOL, "true" if data else "false")
        if kind is int:
            return ScalarNode(_INT, str(data))
        if data is None:
            return ScalarNode(_NULL, "null")
        if kind is float:
            return _REPRESENTER.represent_float(data)  # type: ignore[no-any-return]
        self.pure_only = True  # anything else: PyYAML's own representer (or its error)
        return ScalarNode(_NULL, "null")


def _apart(text: str) -> bool:
    """Multi-line text the emitters write apart: a literal block that keeps its final blank
    lines (`|+`; libyaml then ends the document with `...` when plain scalars follow), or long
    text PyYAML cannot write as a literal block (a space before a line break or at the end),
    which goes double-quoted and is folded differently."""
    if text == "\n" or text.endswith("\n\n"):
        return True
    return len(text) > 40 and (text.endswith(" ") or " \n" in text)


@functools.cache
def _dumper(literal: bool, native: bool) -> Any:
    if native:

        class Emitter(yaml.CSafeDumper):
            def resolve(self, kind: Any, value: Any, implicit: tuple[bool, bool]) -> str:
                if kind is ScalarNode:
                    return _resolved(value, implicit)
                return str(_RESOLVER.resolve(kind, value, implicit))

        return Emitter

    class PureDumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    if literal:
        PureDumper.add_representer(str, _literal_text)
    return PureDumper


def _literal_text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


@functools.lru_cache(maxsize=1 << 16)
def _resolved(value: str, implicit: tuple[bool, bool]) -> str:
    # SafeDumper's resolver has no path resolvers, so the tag depends on the text alone.
    return str(_RESOLVER.resolve(ScalarNode, value, implicit))


_RESOLVER: Any = yaml.resolver.Resolver()
_REPRESENTER: Any = yaml.representer.SafeRepresenter()
