"""Exceptions the SDK raises, and how their advice is spelled. Every user-caused mistake is
one of these, never a traceback from deep inside a dependency.

Example:
    >>> from gkeml_sdk.errors import SpecError
    >>> try:
    ...     raise SpecError("nodes must be >= 1", rule="a job runs on at least one node",
    ...                     fix="nodes=1")
    ... except ValueError as e:
    ...     print(e)
    nodes must be >= 1 (rule: a job runs on at least one node). Try: nodes=1
"""

from __future__ import annotations

from typing import Any

# The most of a user's input one message quotes: enough to recognise it, never a whole file.
EXCERPT_CHARS = 200
# What a message part (what, rule, fix) may hold, whatever built it.
MESSAGE_PART_CHARS = 2_000


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    r"""`value` (its `repr` unless a string) cut to `limit` characters, saying how many were left
    out, for messages that quote user input.

    Example:
        >>> excerpt("x" * 300, limit=10)
        'xxxxxxxxxx… (290 more characters)'
        >>> excerpt(["a"])
        "['a']"
        >>> excerpt("job\x1b[31m.yaml")  # a terminal escape, quoted
        'job\\x1b[31m.yaml'
    """
    text = value if isinstance(value, str) else _safe_repr(value)
    text = text.translate(_CONTROLS)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


# Characters a terminal acts on instead of showing (escape sequences, line breaks, bidi
# overrides): quoted as escapes, so quoted input can neither restyle the terminal nor
# spread one error over several lines.
_CONTROLS = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in (*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except (ValueError, RecursionError):  # ints beyond 4,300 digits, self-containing lists
        return f"<{type(value).__name__}>"


class GkemlError(Exception):
    """Base of every exception the SDK raises on purpose."""


class SpecError(GkemlError, ValueError):
    """An invalid spec: says what is wrong, the GKE/Kueue rule behind it, and what would work.

    Example:
        >>> str(SpecError("bad", rule="why", fix="this"))
        'bad (rule: why). Try: this'
    """

    def __init__(self, what: str, *, rule: str = "", fix: str = "", field: str = "") -> None:
        self.what = what = excerpt(what, MESSAGE_PART_CHARS)
        self.rule = rule = excerpt(rule, MESSAGE_PART_CHARS)
        self.fix = fix = excerpt(fix, MESSAGE_PART_CHARS)
        self.field = excerpt(field)
        text = what
        if rule:
            text += f" (rule: {rule})"
        if fix:
            text += f". Try: {fix}"
        super().__init__(text)


class ConfigError(GkemlError):
    """The environment is not set up: no kubeconfig, a missing CRD, a missing LocalQueue."""


class NoClusterError(ConfigError):
    """No Kubernetes configuration was found (no kubeconfig, not inside a cluster); `why`
    says what was looked for, `GET_CREDENTIALS` is the command that writes one.

    Example:
        >>> NoClusterError("~/.kube/config does not exist").why
        '~/.kube/config does not exist'
    """

    GET_CREDENTIALS = "gcloud container clusters get-credentials CLUSTER --location LOCATION"

    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__(
            f"no Kubernetes configuration found ({why}). Point gkeml at a GKE cluster with "
            f"`{self.GET_CREDENTIALS}` (or pass Client(kubernetes=KubernetesSettings("
            "kubeconfig=..., context=..., api_client=...))), or run on this machine with "
            "Client(backend='local')"
        )


class ClusterError(GkemlError):
    """The Kubernetes API refused a request; keeps the API server's status, reason and message.

    Example:
        >>> str(ClusterError("create JobSet a", status=403, reason="Forbidden", message="no"))
        'create JobSet a: 403 Forbidden: no'
    """

    def __init__(
        self, action: str, *, status: int = 0, reason: str = "", message: str = "", hint: str = ""
    ) -> None:
        self.action = action
        self.status = status
        self.reason = reason
        self.message = message
        self.hint = hint
        said_by_server = f"{status} {reason}".strip() if status else reason
        text = ": ".join(part for part in (action, said_by_server, message) if part)
        if hint:
            text += f". {hint}"
        super().__init__(text)


class NotFoundError(ClusterError):
    """A run, job or queue that does not exist."""


class RunExistsError(ClusterError):
    """A run of that name is still active: the API server's 409 AlreadyExists on a cluster;
    on this machine, a local run directory in use (then without an HTTP status).

    Example:
        >>> str(RunExistsError("submit local run 'ft'", message="a run of that name is Running"))
        "submit local run 'ft': a run of that name is Running"
    """


class GkeError(ClusterError):
    """The GKE API (node pools) refused a request, or its long-running operation failed.

    Example:
        >>> str(GkeError("create node pool a", status=404, reason="NOT_FOUND", message="gone"))
        'create node pool a: 404 NOT_FOUND: gone'
    """


class QuotaError(GkeError):
    """GKE refused for lack of a Compute Engine resource quota (GPUs, CPUs, addresses). The
    API's request-rate limit (HTTP 429) is retried, then reported as a plain `GkeError`."""


class GkePermissionError(GkeError):
    """The caller's credentials lack a permission the GKE request needs."""


class RunTimeoutError(GkemlError, TimeoutError):
    """`wait()` ran out of time before the run reached a terminal state."""


class AdviceSpelling:
    """How the library's messages spell their Python advice, as regular expressions, so an edge
    (the CLI, the magics) can put its own commands in their place.

    Example:
        >>> import re
        >>> bool(re.fullmatch(AdviceSpelling.LOCAL_CLIENT, "Client(backend='local')"))
        True
    """

    # A local client, in the backend-name and the typed-settings form.
    LOCAL_CLIENT = r"Client\((?:backend=['\"]local['\"]|local=\w*(?:\([^()]*\))?)\)"
    CLUSTER_CLIENT = r"Client\((?:kubernetes=\w*(?:\([^()]*\))?)?\)"
    # Settings that say where the cluster is, in either form.
    CLUSTER_SETTINGS = (
        r"Client\(kubernetes=\w*\([^()]*kubeconfig[^()]*\)\)|kubeconfig=/context=/api_client="
    )
    GET_RUN = r"\.get_run\(['\"](?P<name>[^'\"]+)['\"]\)"
