"""The hosts of an Istio VirtualService, judged as istiod's validating webhook judges them
(`pkg/config/validation`: `ValidateWildcardDomain`, an IP address also allowed, no `*` on a
service bound to the mesh, no two hosts that match each other), so a host `validate` accepts
is one istiod accepts."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

# Istio's own DNS-1123 label (`pkg/config/labels`): upper case allowed, unlike Kubernetes'.
_LABEL = r"[a-zA-Z0-9](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?"
_DNS1123_LABEL = re.compile(rf"^{_LABEL}\Z")
_WILDCARD_LABEL = re.compile(rf"^(?:\*|(?:\*|\*-)?{_LABEL})\Z")
LABEL_MAX = 63
DOMAIN_MAX = 255


def virtual_service_host_errors(hosts: Sequence[str], *, mesh: bool = True) -> list[str]:
    """Why istiod would refuse a VirtualService with these `hosts` (`mesh`: it is bound to the
    mesh gateway, as gkeml's always are).

    Example:
        >>> virtual_service_host_errors(["chat.example.com", "*.models.example.com", "10.0.0.1"])
        []
        >>> virtual_service_host_errors(["bad host"])
        ['domain name "bad host" invalid (label "bad host" invalid)']
    """
    errors = []
    valid = True
    for host in hosts:
        problem = wildcard_domain_error(host)
        if problem is not None and not _is_ip(host):
            errors.append(problem)
            valid = False
        elif problem is None and mesh and host == "*":
            errors.append("wildcard host * is not allowed for virtual services bound to the mesh")
            valid = False
    if valid:
        for i, first in enumerate(hosts):
            for second in hosts[i + 1 :]:
                if _matches(first, second):
                    errors.append(f"duplicate hosts in virtual service: {first} & {second}")
    return errors


def wildcard_domain_error(domain: str) -> str | None:
    """`ValidateWildcardDomain`: a domain name whose first label may be `*`, `*-x` or `*x`.

    Example:
        >>> wildcard_domain_error("a.*.com")  # istiod names the part after the first label
        'domain name "*.com" invalid (label "*" invalid)'
    """
    if len(domain) > DOMAIN_MAX:
        return f'domain name "{domain[:40]}…" too long (max {DOMAIN_MAX})'
    if not domain:
        return "empty domain name not allowed"
    first, _, rest = domain.partition(".")
    if len(first) > LABEL_MAX or not _WILDCARD_LABEL.match(first):
        return f'domain name "{domain}" invalid (label "{first}" invalid)'
    if "." not in domain:
        return None
    parts = rest.split(".")
    top = parts[-1]
    if top.isdigit() and top.isascii():  # what Go's strconv.Atoi reads as a number
        return f'domain name "{rest}" invalid (top level domain "{top}" cannot be all-numeric)'
    for i, label in enumerate(parts):
        if i == len(parts) - 1 and label == "":
            return None  # a trailing dot: `istio.io.`
        if len(label) > LABEL_MAX or not _DNS1123_LABEL.match(label):
            return f'domain name "{rest}" invalid (label "{label}" invalid)'
    return None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _matches(a: str, b: str) -> bool:
    """`host.Name.Matches`: equal, or one wildcard covering the other."""
    a_wild, b_wild = a.startswith("*"), b.startswith("*")
    if a_wild and b_wild:
        shorter, longer = sorted((a, b), key=len)
        return longer[1:].endswith(shorter[1:])
    if a_wild:
        return b.endswith(a[1:])
    if b_wild:
        return a.endswith(b[1:])
    return a == b
