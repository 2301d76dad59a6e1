"""How PyYAML writes one string in block context, asked once per distinct text and memoised
(the choice depends on the text alone): plain, single- or double-quoted, or a literal block;
and, since PyYAML folds long text with spaces past column 80, the text as it reads from a
given column. `core.yaml_dump` lays out the collections around these strings.

Printable ASCII is decided here by the rules of PyYAML's `Emitter.analyze_scalar` for that
alphabet (an emitter per string costs 1.8 M instructions); other text is written by PyYAML once
and the result kept.

Example:
    >>> [placed(text, column=4, indent=0, literal=True) for text in ("on", "x: y", "a\\nb")]
    ["'on'\\n", "'x: y'\\n", '|-\\n  a\\n  b\\n']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import yaml

WIDTH = 80  # PyYAML's default best_width: where it folds long lines of text
ANYWHERE = 1 << 30  # the start column limit of text PyYAML never folds
NEVER = -ANYWHERE  # the limit of text this module does not write
STR_TAG = "tag:yaml.org,2002:str"
_SPACES = re.compile("( +)")
_LINE_BREAKS = re.compile("[\n\x85\u2028\u2029]")
_PRINTABLE = re.compile("[ -~]*")
_PRINTABLE_LINES = re.compile("[ -~\n]*")
_LEADING_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
MEMO_SIZE = 1 << 16  # the most texts (and keys) one memo holds
_BLOCKS_SIZE = 1 << 10  # scripts and files: long texts
# Memoised per text: how PyYAML writes it (`learn`); the same with its line break, for text
# PyYAML never folds; literal blocks by text and indent.
TEXTS: dict[str, tuple[str, int | None]] = {}
FREE: dict[str, str] = {}
_BLOCKS: dict[tuple[str, int], str] = {}


class Unwritable(Exception):
    """A value this writer does not write as PyYAML would: the stream goes to PyYAML."""


def placed(value: str, column: int, indent: int, literal: bool) -> str:
    """The line(s) of `value` written from `column` (more lines at `indent` + 2), for text
    PyYAML may fold past column 80 or writes as a literal block; else `Unwritable`."""
    text, limit = TEXTS.get(value) or learn(value)
    if limit is None:
        if not literal:
            raise Unwritable
        block = _BLOCKS.get((value, indent))
        if block is None:
            if len(_BLOCKS) >= _BLOCKS_SIZE:
                _BLOCKS.clear()
            block = _BLOCKS[value, indent] = text + "\n" + _lines(value, " " * (indent + 2))
        return block
    if column <= limit:
        return text + "\n"
    if limit == NEVER or text[0] == '"':
        raise Unwritable  # PyYAML folds double-quoted text at escapes too: not written here
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
        if piece == " " and column > WIDTH and not edge:
            out.append("\n" + pad)
            column = len(pad)
        else:
            out.append(piece)
            column += len(piece)
    if quoted:
        out.append("'")
    return "".join(out)


def learn(value: str) -> tuple[str, int | None]:
    """How PyYAML writes `value` on one line and the last column it may start at without
    PyYAML folding it (`NEVER`: this writer does not write it); for multi-line text that
    PyYAML writes as a literal block, the block's header and None."""
    if len(TEXTS) >= MEMO_SIZE:
        TEXTS.clear()
        FREE.clear()
    TEXTS[value] = found = _written(value)
    text, limit = found
    if limit == ANYWHERE:
        FREE[value] = text + "\n"
    return found


def _written(value: str) -> tuple[str, int | None]:
    if "\n" in value:
        hint = _literal_hint(value)
        return (hint, None) if hint is not None else ("", NEVER)
    text = _ascii_text(value)
    if text is None:
        if _LINE_BREAKS.search(value):
            return "", NEVER
        item = yaml.dump([value], Dumper=yaml.SafeDumper, width=ANYWHERE, default_flow_style=False)
        text = str(item)[2:-1]
        if "\n" in text:
            return "", NEVER
    if " " in text or text.startswith('"'):  # PyYAML may fold it at a space or an escape
        return text, WIDTH - len(text)
    return text, ANYWHERE


def _ascii_text(value: str) -> str | None:
    """Printable ASCII `value` as PyYAML writes it in block context (None for other text):
    plain when its scalar analysis allows it and the text resolves to a string, else
    single-quoted. The rules of `Emitter.analyze_scalar` for this alphabet, without making an
    emitter per string (that costs 1.8 M instructions, more than a whole render's margin
    above its floor when a job has a dozen such strings)."""
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
        and _resolve(value) == STR_TAG
    )
    return value if plain else "'" + value.replace("'", "''") + "'"


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
    written = str(yaml.dump([value], Dumper=LiteralDumper, default_flow_style=False))
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


class Dumper(yaml.SafeDumper):
    """PyYAML's own writer with our choice of no aliases (repeated data written in full)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


class LiteralDumper(Dumper):
    """PyYAML's own writer with our choices: no aliases, multi-line text as literal blocks."""


LiteralDumper.add_representer(
    str,
    lambda dumper, text: dumper.represent_scalar(
        STR_TAG, text, style="|" if "\n" in text else None
    ),
)
_resolve: Callable[[str], str] = functools.partial(
    yaml.resolver.Resolver().resolve, yaml.ScalarNode, implicit=(True, False)
)
