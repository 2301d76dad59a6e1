"""The direct block writer writes what PyYAML's stock dumper writes, or nothing: over data
built to hit every choice PyYAML makes for a string (plain, single- or double-quoted, literal
blocks, folding at column 80, `? ` keys), and it writes every manifest we compile."""

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gkeml_sdk.core.yaml_dump import write_stream
from tests.bench.bench_core import varied_jobs
from tests.unit.core.test_manifests import stock
from tests.unit.serving.test_golden import SERVICES
from tests.unit.training.test_golden import JOBS

# Pieces that change how PyYAML writes a string: indicators, quotes, words it resolves to
# something else (booleans, nulls, numbers, dates), spaces where it folds, line breaks.
_PIECES = [
    *"abz09_/.-:#'\" ,[]{}&*!|>%@`?~=\t\\\né",
    "true", "yes", "on", "Off", "null", "~", "1.5", "0x1f", "1_000", "2024-01-02", "1:20",
    ".inf", "---", "...", "- ", ": ", " #", "  ", "\n\n", "word " * 6,
]  # fmt: skip
_TEXT = (
    st.text(alphabet="az09_/.,:#-", max_size=5)  # around what is written without asking PyYAML
    | st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)
    | st.text(max_size=6)
)
_LONG = st.lists(st.sampled_from(["ab", " ", "cd-ef", ":", "'", "\n"]), min_size=20, max_size=60)
_STRINGS = _TEXT | _LONG.map("".join)
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | _STRINGS
_DATA = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_STRINGS, inner, max_size=3),
    max_leaves=24,
)
_DOCUMENTS = st.lists(st.dictionaries(_STRINGS, _DATA, max_size=4), min_size=1, max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_DOCUMENTS, st.booleans())
def test_what_it_writes_is_what_pyyaml_writes(documents: list[Any], literal: bool) -> None:
    written = write_stream(documents, literal=literal)
    assert written is None or written == stock(documents, literal)


# Printable ASCII on one line, which PyYAML writes plain or single-quoted, folded at column 80:
# this writer writes all of it, so here it must never leave a stream to PyYAML.
_ONE_LINE = st.text(alphabet="az09_/.,:#- '\"!&*?|>%@`{}[]~=", max_size=6) | st.lists(
    st.sampled_from([p for p in _PIECES if p.isascii() and p.isprintable()]), max_size=12
).map("".join)
# PyYAML writes a key of 123 characters or more as a `? ` key; this writer leaves those (no
# compiled key is that long) to PyYAML, as test_what_it_does_not_know_it_leaves_to_pyyaml
# checks; a 122-character key is written here (test_manifest_shaped_data_is_written_here).
_KEY = _ONE_LINE.filter(lambda key: 0 < len(key) < 123)
_ONE_LINE_DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _ONE_LINE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEY, inner, max_size=3),
    max_leaves=24,
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.dictionaries(_KEY, _ONE_LINE_DATA, max_size=4), min_size=1, max_size=3))
def test_it_writes_all_one_line_ascii_as_pyyaml_does(documents: list[Any]) -> None:
    assert write_stream(documents, literal=False) == stock(documents, literal=False)


# Lines of printable ASCII that end in no space, as code and config files in ConfigMaps are:
# PyYAML writes them as literal blocks (`|`, `|-`), and so must this writer.
_LINE = _ONE_LINE.map(str.rstrip).filter(lambda line: not line.startswith(" "))
_BLOCK = (
    st.tuples(st.lists(_LINE, min_size=2, max_size=5), st.booleans())
    .map(lambda t: "\n".join(t[0]).lstrip("\n") + ("\n" if t[1] else ""))
    .filter(lambda text: "\n" in text.strip("\n") and "\n\n" not in text[-2:] and text[:1] != " ")
)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.dictionaries(_KEY, st.recursive(
    _BLOCK | _ONE_LINE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEY, inner, max_size=3),
    max_leaves=12,
), max_size=4), min_size=1, max_size=2))  # fmt: skip
def test_it_writes_text_blocks_as_pyyaml_does(documents: list[Any]) -> None:
    assert write_stream(documents, literal=True) == stock(documents, literal=True)


def _nested(depth: int, leaf: Any) -> Any:
    for index in range(depth):
        leaf = {f"k{index}": leaf} if index % 2 else [leaf]
    return leaf


@pytest.mark.parametrize(
    "value",
    [
        "plain", "on", "17", "", " lead", "trail ", "a: b", "a #b", "- item", "'q'", '"q"',
        "tab\there", "é", "x" * 200, "a b " * 30, "run\nthis\n", "run\nthis", "\nlead",
        "keep\n\n", "trail \nx", "ends\nin a space ", " lead\nx",
        1, -2, 1.5e20, float("inf"), float("nan"), True, None,
    ],
)  # fmt: skip
@pytest.mark.parametrize("depth", [0, 1, 5, 38])
def test_each_kind_of_value_at_every_depth(value: Any, depth: int) -> None:
    documents = [{"key": _nested(depth, value)}, {}, {"after": [value, {"k": value}]}]
    for literal in (True, False):
        written = write_stream(documents, literal=literal)
        assert written is None or written == stock(documents, literal), (value, depth)


@pytest.mark.parametrize(
    "documents",
    [
        [{"kind": "A", "on": "yes", "n": 17, "list": ["x", {"a": 1, "b": [[], {}]}]}],
        [{"script": "set -e\npython train.py\n", "args": ["--flag", "a: b", "word " * 5]}],
        [{"k" * 122: 1}, {"deep": _nested(20, "v")}],
        [{"fold": "a long line " * 10, "quoted": [": a long line " * 9, "a-very-long-word" * 9]}],
        # Spaces PyYAML never folds: one that starts or ends quoted text, past column 80.
        [{"ends": "x" * 85 + " ", "k" * 80: " starts", "runs": "y" * 81 + "  z"}],
    ],
)
def test_manifest_shaped_data_is_written_here(documents: list[Any]) -> None:
    """Not only correct when it writes: it does write what manifests hold."""
    assert write_stream(documents, literal=True) == stock(documents)


@pytest.mark.parametrize(
    "documents",
    [
        [{1: "an int key"}],
        [{"k" * 123: "a key PyYAML writes after `? `"}],
        [{"multi\nline key": 1}],
        [{"escaped": "é and escaped " * 8}],  # double-quoted: PyYAML folds at escapes too
        [{"keep": "ends in blank lines\n\n"}],  # `|+`: PyYAML ends the stream with `...`
        [{"set": {1, 2}}],  # PyYAML's own error
        ["a document that is no mapping"],
    ],
)
def test_what_it_does_not_know_it_leaves_to_pyyaml(documents: list[Any]) -> None:
    assert write_stream(documents, literal=True) is None


def test_it_writes_every_manifest_we_compile() -> None:
    compiled = [job.compile().objects for job in [*varied_jobs(300), *JOBS.values()]]
    compiled += [service.compile().objects for service in SERVICES.values()]
    for objects in compiled:
        assert write_stream(objects, literal=True) == stock(objects)
