r"""YAML text of plain data (dicts, lists, strings, numbers, booleans, None), written by PyYAML:
keys in their given order, block style, no aliases, lines never folded.

libyaml writes it when PyYAML has it (its wheels do), else PyYAML's own emitter, and both
write the same bytes. They differ only in folding long lines (libyaml never folds
double-quoted text at an escape), so no line is folded; after a `|+` block, which `_literal`
avoids; and on keys that are empty, hold a carriage return or pass 128 bytes, which our specs
and manifests do not have.

Example:
    >>> dump_all([{"kind": "A", "data": {"run.sh": "set -e\nrun\n"}}, {"kind": "B"}], literal=True)
    'kind: A\ndata:\n  run.sh: |\n    set -e\n    run\n---\nkind: B\n'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

try:
    from yaml import CSafeDumper as SafeDumper
except ImportError:  # PyYAML built without libyaml
    from yaml import SafeDumper  # type: ignore[assignment]

# The largest width libyaml takes (a C int): no line is ever folded.
_NO_FOLDING = 2**31 - 1


class Dumper(SafeDumper):
    """PyYAML's safe dumper, writing repeated data in full: anchors (&id001) confuse readers."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


class LiteralDumper(Dumper):
    """`Dumper` writing multi-line text as literal blocks (`|`): scripts and config files in
    manifests read as the files they are."""


def _literal(dumper: Dumper, text: str) -> yaml.ScalarNode:
    # Text ending in a blank line would be a `|+` block, after which libyaml (not PyYAML) ends
    # the stream with `...`: it stays quoted, so the bytes do not depend on the machine.
    style = "|" if "\n" in text and not text.endswith("\n\n") and text != "\n" else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


LiteralDumper.add_representer(str, _literal)


def dump_all(documents: Iterable[Any], *, literal: bool) -> str:
    """`documents` as one YAML stream; multi-line strings as literal blocks with `literal`,
    else quoted (as `yaml.safe_dump` writes them).

    Example:
        >>> ports = {"port": 8000}
        >>> print(dump_all([{"a": ports, "b": ports}], literal=False), end="")
        a:
          port: 8000
        b:
          port: 8000
    """
    dumper = LiteralDumper if literal else Dumper
    text: str = yaml.dump_all(documents, Dumper=dumper, sort_keys=False, width=_NO_FOLDING)
    return text
