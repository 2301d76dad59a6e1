"""One quantity grammar: `gkeml_sdk.core.quantity` reads quantities as Kubernetes does
(apimachinery pkg/api/resource/quantity.go), checked against the Python client's
`kubernetes.utils.parse_quantity` on generated strings."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes.utils import parse_quantity as client_parse

from gkeml_sdk.core.quantity import check_quantity, parse_quantity, quantity
from gkeml_sdk.errors import SpecError

# The same examples on every run, so that a failure is one a colleague can reproduce.
same_examples = settings(max_examples=400, derandomize=True, deadline=None, database=None)

BINARY_SI = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
DECIMAL_SI = ("n", "u", "m", "", "k", "M", "G", "T", "P", "E")
digits = st.text("0123456789", min_size=1, max_size=30)
number = st.one_of(
    digits,
    st.builds("{}.{}".format, digits, digits),
    st.builds("{}.".format, digits),
    st.builds(".{}".format, digits),
)
exponent = st.builds(
    "{}{}{}".format,
    st.sampled_from("eE"),
    st.sampled_from(("", "+", "-")),
    st.text("0123456789", min_size=1, max_size=6),
)
suffix = st.one_of(st.sampled_from(BINARY_SI + DECIMAL_SI), exponent)
valid = st.builds("{}{}{}".format, st.sampled_from(("", "+", "-")), number, suffix)
# Strings made of what quantities are made of, so that most are near misses.
near_misses = st.text("0123456789.+-eEinumkKMGTP _", max_size=12)


def client_value(text: str) -> Decimal | None:
    try:
        return Decimal(client_parse(text))
    except ValueError:
        return None


@same_examples
@given(valid)
def test_valid_quantities_parse_to_the_kubernetes_value(text: str) -> None:
    assert parse_quantity(text) == client_parse(text)


@same_examples
@given(near_misses)
def test_what_kubernetes_refuses_is_refused_and_the_rest_agrees(text: str) -> None:
    try:
        ours: Decimal | None = parse_quantity(text)
    except ValueError:
        ours = None
    theirs = client_value(text)
    if theirs is None:
        assert ours is None, f"{text!r} parsed as {ours} but Kubernetes refuses it"
    elif ours is not None:
        assert ours == theirs


@pytest.mark.parametrize(
    "text",
    # The Python client lets these by; the API server's parser refuses them.
    ["1K", "1e3k", "1.5e3Ki", "1_000", " 1", "1 ", "Infinity", "NaN"],
)
def test_strings_only_the_python_client_accepts_are_refused(text: str) -> None:
    assert client_value(text) is not None  # the premise: the client is laxer here
    with pytest.raises(ValueError, match="is not a Kubernetes quantity"):
        parse_quantity(text)


@pytest.mark.parametrize(
    "text", ["", ".", "+", "-", "Ki", "1.2.3", "1ki", "1mi", "--1", "1e", "1E+", "0x10", "1e3.5"]
)
def test_strings_outside_the_grammar_are_refused(text: str) -> None:
    # quantity.go's scanner reads ".", "+" and "-" as zero; its documented grammar has no
    # number there, and a request nobody meant is better refused.
    with pytest.raises(ValueError):
        parse_quantity(text)


def test_an_exponent_beyond_int64_is_refused() -> None:
    # quantity.go reads the exponent with strconv.ParseInt(..., 64); Decimal stops at 10**18.
    with pytest.raises(ValueError):
        parse_quantity("1e99999999999999999999")


def test_cluster_readers_read_what_does_not_parse_as_zero() -> None:
    assert quantity(" 16Gi ") == 16 * 2**30
    assert quantity(8) == 8 and quantity(Decimal("0.5")) == Decimal("0.5")
    assert quantity("-1") == -1 and quantity("500u") == Decimal("0.0005")
    assert quantity("1.2.3") == 0 and quantity(".") == 0 and quantity(None) == 0


@pytest.mark.parametrize("value", ["500m", "4", "16Gi", "+1", "1e3", "0.5", "500u", "1.", ".5k"])
def test_positive_quantities_pass_the_spec_check(value: str) -> None:
    check_quantity("cpu", value)


@pytest.mark.parametrize(
    "value", ["0", "-1", "0.0", "0Gi", "16GB", "1K", "", " 1", "-0.5m", "1e999", "8Ei"]
)
def test_other_quantities_fail_the_spec_check_with_the_same_words(value: str) -> None:
    with pytest.raises(SpecError) as caught:
        check_quantity("memory", value)
    assert str(caught.value) == (
        f"memory={value!r} is not a positive Kubernetes quantity (rule: a quantity is a number "
        "with an optional suffix (m, k, M, G, Ki, Mi, Gi, ...) and a request must be above "
        "zero). Try: memory='16Gi' or memory='512Mi'"
    )
