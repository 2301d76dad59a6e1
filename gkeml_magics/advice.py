"""Library advice in the magics' words. Errors raised by gkeml_sdk speak Python
(`Client(backend='local')`, `nodes=1`, `spot=True`); a notebook user types magic options
instead (`--local`, `--nodes 1`, `--spot`)."""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Callable
from functools import cache

from gkeml_sdk.errors import AdviceSpelling

from . import parsers as p

LOCAL = AdviceSpelling.LOCAL_CLIENT
CLUSTER = AdviceSpelling.CLUSTER_CLIENT
WHERE = AdviceSpelling.CLUSTER_SETTINGS
GET_RUN = AdviceSpelling.GET_RUN
# A Python value in advice: a bool, a quoted string, a number or a plain word.
VALUE = r"(?P<value>True|False|'[^']*'|\"[^\"]*\"|[\w./:-]+)"

CALLS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), words)
    for pattern, words in (
        (LOCAL + GET_RUN + r"\.cancel\(\)", r"%gke_cancel \g<name> --local"),
        (CLUSTER + GET_RUN + r"\.cancel\(\)", r"%gke_cancel \g<name>"),
        (LOCAL + r"\.runs\(\)", "%gke_jobs --local"),
        (CLUSTER + r"\.runs\(\)", "%gke_jobs"),
        (WHERE, "%gke_config --kubeconfig/--context"),
        (LOCAL, "--local"),
        # A volume is a typed object: the magic takes it in the dict that --fields names.
        (r"volumes=\[\.\.\.\]", "--fields VAR with VAR = {'volumes': [...]}"),
    )
)


def magic_words(message: str) -> str:
    """A library message with its Python advice replaced by magic options.

    Example:
        >>> magic_words("nodes=0 (rule: a job runs on at least one node). Try: nodes=1")
        '--nodes 0 (rule: a job runs on at least one node). Try: --nodes 1'
        >>> magic_words("list the runs with Client(backend='local').runs()")
        'list the runs with %gke_jobs --local'
    """
    for pattern, words in CALLS:
        message = pattern.sub(words, message)
    for pattern, option in _field_rules():
        message = pattern.sub(option, message)
    return message


@cache
def _field_rules() -> tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...]:
    """`field=value` -> `--field value` for every option of `%%gke_train` and `%gke_cost`."""
    rules = []
    seen = set()
    for parser in (p.train_parser(), p.cost_parser()):
        for action in parser._actions:
            flags = [f for f in action.option_strings if f.startswith("--")]
            if not flags or action.dest in seen:
                continue
            seen.add(action.dest)
            pattern = re.compile(rf"(?<![\w.-]){re.escape(action.dest)}={VALUE}")
            rules.append((pattern, _option(action, flags[0])))
    return tuple(rules)


def _option(action: argparse.Action, flag: str) -> Callable[[re.Match[str]], str]:
    def words(match: re.Match[str]) -> str:
        value = match["value"]
        if action.nargs == 0:  # a switch: --spot, or --no-wait where argparse offers it
            negative = [f for f in action.option_strings if f.startswith("--no-")]
            if value == "True":
                return flag
            return negative[0] if value == "False" and negative else match[0]
        if value[0] in "'\"":
            value = value[1:-1]
        return f"{flag} {shlex.quote(value)}"

    return words
