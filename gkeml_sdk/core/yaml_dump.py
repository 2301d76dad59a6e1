r"""YAML of plain data (dict, list, str, int, float, bool, None) in block style, keys in
their given order, no aliases, with the bytes PyYAML's pure `SafeDumper` writes (indent 2,
width 80): written here directly for the streams whose every value this module knows how to
write, else by PyYAML itself.

Why not PyYAML, even with libyaml: most of a dump is spent outside the emitter, building and
resolving one node per value in Python (through `CSafeDumper`, 1,000 compiled jobs took 12.6x
`json.dumps` of the same data; written here, 1.3x). How each distinct string is written
(plain, quoted or a literal block) is still PyYAML's own choice, asked once per string and
memoised: the choice depends on the text alone. Where a string lands matters only for long
text with spaces, which PyYAML folds past column 80: it is folded here the same way, except
double-quoted text (PyYAML folds it at escapes too), which sends the stream to PyYAML.

Example:
    >>> dump_all([{"kind": "A", "spec": {"on": "yes", "items": ["x", {}]}}, {"kind": "B"}])
    "kind: A\nspec:\n  'on': 'yes'\n  items:\n  - x\n  - {}\n---\nkind: B\n"
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

import yaml

_WIDTH = 80  # PyYAML's default best_width: where it folds long lines of text
_ANYWHERE = 1 << 30  # the start column limit of text PyYAML never folds
# PyYAML writes a key as a `? ` key from 128 characters, counting its tag (`!!str`) too.
_KEY_LIMIT = 128 - len("!!str")
_SPACES = re.compile("( +)")
_LINE_BREAKS = re.compile("[\n\x85\u2028\u2029]")
_PRINTABLE = re.compile("[ -~]*")
_PRINTABLE_LINES = re.compile("[ -~\n]*")
_LEADING_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
_STR_TAG = "tag:yaml.org,2002:str"
_NEVER = -_ANYWHERE
_MEMO_SIZE = 1 << 16
_BLOCKS_SIZE = 1 << 10  # scripts and files: long texts
# Memoised per text: how PyYAML writes it (`_learn`); the same with its line break, for text
# PyYAML never folds; and as a key.
_TEXTS: dict[str, tuple[str, int | None]] = {}
_FREE: dict[str, str] = {}
_HEADS: dict[str, str] = {}
_BLOCKS: dict[tuple[str, int], str] = {}  # literal blocks by text and indent


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
        dumper = _LiteralDumper if literal else _Dumper
        written = yaml.dump_all(docs, Dumper=dumper, sort_keys=False, default_flow_style=False)
    return str(written)


class _Unwritable(Exception):
    """A value this writer does not write as PyYAML would: the stream goes to PyYAML."""


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
    append, free, heads = out.append, _FREE, _HEADS

    # PyYAML's layout: a mapping's keys start at its indent, a sequence inside a mapping at
    # the mapping's own indent, and a collection inside a sequence on the line of its `- `.
    # `lead` is what goes before the first key or item: its indent, or nothing after `- `.
    def mapping(data: dict[Any, Any], indent: int, lead: str) -> None:
        pad = " " * indent
        for key, value in data.items():
            head = heads.get(key) or _head(key)
            kind = type(value)
            if kind is str:
                text = free.get(value) or _placed(value, indent + len(head) + 1, indent, literal)
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
                append(lead + (free.get(value) or _placed(value, indent + 2, indent, literal)))
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
    except _Unwritable:
        return None
    return "".join(out)


def _placed(value: str, column: int, indent: int, literal: bool) -> str:
    """The line(s) of `value` written from `column` (more lines at `indent` + 2), for text
    PyYAML may fold past column 80 or writes as a literal block; else `_Unwritable`."""
    text, limit = _TEXTS.get(value) or _learn(value)
    if limit is None:
        if not literal:
            raise _Unwritable
        block = _BLOCKS.get((value, indent))
        if block is None:
            if len(_BLOCKS) >= _BLOCKS_SIZE:
                _BLOCKS.clear()
            block = _BLOCKS[value, indent] = text + "\n" + _lines(value, " " * (indent + 2))
        return block
    if column <= limit:
        return text + "\n"
    if limit == _NEVER or text[0] == '"':
        raise _Unwritable  # PyYAML folds double-quoted text at escapes too: not written here
    return _folded(value, text[0] == "'", column, " " * (indent + 2)) + "\n"


def _folded(value: str, quoted: bool, column: int, pad: str) -> str:
    """Plain or single-quoted `value` folded as PyYAML folds it: a single space between two
    words becomes a line break (and `pad`) once the line has passed column 80."""
    pieces = _SPACES.split(value)
    out = ["'"] if quoted else []
    column += quoted
    last = len(pieces) - 1
    for index, piece in enumerate(pieces):
        if index % 2 == 0:  # a word
            if quoted:
                piece = piece.replace("'", "''")
            out.append(piece)
            column += len(piece)
            continue
        # PyYAML keeps a space that starts or ends the text, and every run of spaces.
        edge = (index == 1 and not pieces[0]) or (index == last - 1 and not pieces[last])
        if piece == " " and column > _WIDTH and not edge:
            out.append("\n" + pad)
            column = len(pad)
        else:
            out.append(piece)
            column += len(piece)
    if quoted:
        out.append("'")
    return "".join(out)


def _learn(value: str) -> tuple[str, int | None]:
    """How PyYAML writes `value` on one line and the last column it may start at without
    PyYAML folding it (`_NEVER`: this writer does not write it); for multi-line text that
    PyYAML writes as a literal block, the block's header and None."""
    if len(_TEXTS) >= _MEMO_SIZE:
        _TEXTS.clear()
        _FREE.clear()
    _TEXTS[value] = found = _written(value)
    text, limit = found
    if limit == _ANYWHERE:
        _FREE[value] = text + "\n"
    return found


def _written(value: str) -> tuple[str, int | None]:
    if "\n" in value:
        hint = _literal_hint(value)
        return (hint, None) if hint is not None else ("", _NEVER)
    text = _ascii_text(value)
    if text is None:
        if _LINE_BREAKS.search(value):
            return "", _NEVER
        item = yaml.dump([value], Dumper=yaml.SafeDumper, width=_ANYWHERE, default_flow_style=False)
        text = str(item)[2:-1]
        if "\n" in text:
            return "", _NEVER
    if " " in text or text.startswith('"'):  # PyYAML may fold it at a space or an escape
        return text, _WIDTH - len(text)
    return text, _ANYWHERE


def _ascii_text(value: str) -> str | None:
    """Printable ASCII `value` as PyYAML writes it in block context (None for other text):
    plain when its scalar analysis allows it and the text resolves to a string, else
    single-quoted. The rules of `Emitter.analyze_scalar` for this alphabet, without making an
    emitter per string (that costs 1.8 M instructions, more than a whole `gkeml render`'s
    margin when a job has a dozen such strings)."""
    if not _PRINTABLE.fullmatch(value):
        return None
    first = value[:1]
    plain = (
        bool(value)
        and first not in _LEADING_INDICATORS
        and not (first in "-?:" and value[1:2] in ("", " "))
        and not value.startswith(("---", "...", " "))
        and not value.endswith((" ", ":"))
        and ": " not in value
        and " #" not in value
        and _resolve(value) == _STR_TAG
    )
    return value if plain else "'" + value.replace("'", "''") + "'"


def _head(key: Any) -> str:
    """`key:` as PyYAML writes a simple key (it never folds one)."""
    if type(key) is not str:
        raise _Unwritable
    text, limit = _TEXTS.get(key) or _learn(key)
    if not key or len(key) >= _KEY_LIMIT or limit is None or limit == _NEVER:
        raise _Unwritable
    if len(_HEADS) >= _MEMO_SIZE:
        _HEADS.clear()
    _HEADS[key] = head = text + ":"
    return head


def _literal_hint(value: str) -> str | None:
    """The header PyYAML writes `value` under (`|` or `|-`) when it writes it as a literal
    block whose lines read as this writer writes them; else None."""
    if _PRINTABLE_LINES.fullmatch(value):
        # PyYAML's analysis for this alphabet: no literal block if a space ends a line or the
        # text; a block that keeps its final blank lines (`|+`) or starts with a space or a
        # line break (an indentation digit) is not one this writer writes.
        if value[0] in " \n" or value.endswith(("\n\n", " ")) or " \n" in value:
            return None
        return "|" if value.endswith("\n") else "|-"
    written = str(yaml.dump([value], Dumper=_LiteralDumper, default_flow_style=False))
    header, _, _ = written.partition("\n")
    if header not in ("- |", "- |-"):
        return None
    hint = header[2:]
    return hint if written == "- " + hint + "\n" + _lines(value, "  ") else None


def _lines(value: str, pad: str) -> str:
    lines = value.split("\n")
    if value.endswith("\n"):
        lines.pop()
    return "".join(pad + line + "\n" if line else "\n" for line in lines)


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
    raise _Unwritable


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


class _LiteralDumper(_Dumper):
    pass


_LiteralDumper.add_representer(
    str,
    lambda dumper, text: dumper.represent_scalar(
        _STR_TAG, text, style="|" if "\n" in text else None
    ),
)
_resolve: Callable[[str], str] = functools.partial(
    yaml.resolver.Resolver().resolve, yaml.ScalarNode, implicit=(True, False)
)
_REPRESENTER: Any = yaml.representer.SafeRepresenter()
