"""VirtualService hosts judged as istiod judges them: the cases of Istio's own
`TestValidateWildcardDomain` and `TestValidateVirtualService` host rows."""

from __future__ import annotations

import pytest

from gkeml_sdk import SpecError
from gkeml_sdk.serving.istio_hosts import virtual_service_host_errors, wildcard_domain_error
from gkeml_sdk.serving.routing import Routing


@pytest.mark.parametrize(
    ("domain", "error"),
    [
        ("*.foo.bar", None),
        ("*foo.bar", None),
        ("*-foo.bar", None),
        ("foo.bar", None),
        ("Foo.Bar", None),  # Istio's labels allow upper case
        ("foo.bar.", None),
        ("*", None),
        ("a" * 63 + ".com", None),
        ("", "empty domain name not allowed"),
        ("a" * 64 + ".com", "invalid (label"),
        ("a." * 128 + "com", "too long (max 255)"),
        ("**.foo", 'label "**" invalid'),
        ("foo.*", 'label "*" invalid'),
        ("foo.*.bar", 'label "*" invalid'),
        ("bad host", 'label "bad host" invalid'),
        ("foo_bar.com", 'label "foo_bar" invalid'),
        ("foo.123", 'top level domain "123" cannot be all-numeric'),
        ("foo..bar", 'label "" invalid'),
    ],
)
def test_wildcard_domains_as_istio_validates_them(domain: str, error: str | None) -> None:
    found = wildcard_domain_error(domain)
    if error is None:
        assert found is None
    else:
        assert found is not None and error in found


def test_virtual_service_hosts() -> None:
    assert virtual_service_host_errors(["10.0.0.1", "::1", "chat.ml.svc.cluster.local"]) == []
    assert virtual_service_host_errors(["*"]) == [
        "wildcard host * is not allowed for virtual services bound to the mesh"
    ]
    assert virtual_service_host_errors(["*"], mesh=False) == []
    assert virtual_service_host_errors(["*.foo.com", "*.com"]) == [
        "duplicate hosts in virtual service: *.foo.com & *.com"
    ]
    assert virtual_service_host_errors(["a.com", "a.com"]) == [
        "duplicate hosts in virtual service: a.com & a.com"
    ]
    assert virtual_service_host_errors(["a.foo.com", "b.foo.com"]) == []


@pytest.mark.parametrize("hosts", [["bad host"], ["*"], ["chat.example.com", "*.example.com"]])
def test_routing_refuses_hosts_istiod_refuses(hosts: list[str]) -> None:
    with pytest.raises(SpecError, match=r"hosts: .*Try: hosts=\['chat.example.com'\]") as caught:
        Routing(via="istio", hosts=hosts)
    assert caught.value.field == "hosts"
    assert Routing(via="istio", hosts=["chat.example.com", "10.0.0.1"]).hosts
