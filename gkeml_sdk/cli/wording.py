"""Library advice in the CLI's words. Errors raised by gkeml_sdk speak Python
(`Client(backend='local')`, `svc.compile()`); `gkeml` prints the commands and flags that do
the same (`--local`, `gkeml render FILE`)."""

from __future__ import annotations

import re

from gkeml_sdk.errors import AdviceSpelling

LOCAL = AdviceSpelling.LOCAL_CLIENT
CLUSTER = AdviceSpelling.CLUSTER_CLIENT
WHERE = AdviceSpelling.CLUSTER_SETTINGS
GET_RUN = AdviceSpelling.GET_RUN

RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), words)
    for pattern, words in (
        (LOCAL + GET_RUN + r"\.cancel\(\)", r"gkeml cancel \g<name> --local"),
        (CLUSTER + GET_RUN + r"\.cancel\(\)", r"gkeml cancel \g<name>"),
        (LOCAL + r"\.runs\(\)", "gkeml runs --local"),
        (CLUSTER + r"\.runs\(\)", "gkeml runs"),
        (CLUSTER + r"\.serve\(svc\)", "gkeml serve FILE"),
        (CLUSTER + " with a cluster", "a cluster (without --local)"),
        ("cluster with " + CLUSTER, "cluster (without --local)"),
        (r"svc\.compile\(\)", "gkeml render FILE"),
        (WHERE, "--kubeconfig/--context"),
        (LOCAL, "--local"),
        (r"(?<![\w.-])max_resubmits=", "--max-resubmits "),
        (r"(?<![\w.-])fallback_to_on_demand_after=", "--fallback-after "),
        (r"(?<![\w.-])hours=", "--cost "),
    )
)


def cli_words(message: str, has_local: bool = True, without_cluster: str = "") -> str:
    """A library message with its Python advice replaced by `gkeml` commands and flags; for a
    command with no `--local` (it needs a cluster), advice to run locally is left out, and
    `without_cluster` (what the command's user can do with no cluster) takes its place.

    Example:
        >>> cli_words("no kubeconfig: pass kubeconfig=/context=/api_client=, "
        ...           "or run on this machine with Client(backend='local')")
        'no kubeconfig: pass --kubeconfig/--context, or run on this machine with --local'
        >>> cli_words("no kubeconfig: pass kubeconfig=, or run on this machine with "
        ...           "Client(backend='local')", has_local=False)
        'no kubeconfig: pass kubeconfig='
        >>> cli_words("no kubeconfig, or run on this machine with Client(backend='local')",
        ...           without_cluster="print the objects only with --offline")
        'no kubeconfig; without a cluster, print the objects only with --offline'
        >>> cli_words("still active (Client().get_run('ft').cancel())")
        'still active (gkeml cancel ft)'
    """
    if without_cluster:
        local = r",? or run on this machine with " + LOCAL
        instead = f"; without a cluster, {without_cluster}"
        message = re.sub(local, instead, message)
    elif not has_local:
        message = re.sub(r",? or run on this machine with " + LOCAL, "", message)
    for pattern, words in RULES:
        message = pattern.sub(words, message)
    return message
