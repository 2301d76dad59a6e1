"""The `gkeml` command: render, validate and browse the catalog (and, with a cluster,
submit and follow runs). Prints and exits here only; the library raises."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from gkeml_sdk.errors import GkemlError

# The module under gkeml_sdk.cli that defines each command. Start-up imports only the
# one the command line names: `gkeml render` never pays for the cluster client.
COMMANDS = {
    "render": "render_commands",
    "validate": "render_commands",
    "catalog": "catalog_commands",
    "why": "why_commands",
    "preview": "preview_commands",
    "setup": "setup_commands",
    **dict.fromkeys(("submit", "status", "logs", "cancel", "runs", "serve"), "run_commands"),
    "tenant": "tenant_commands",
    "nodepool": "nodepool_commands",
    "controller": "controller_commands",
}
# Commands that start no process: for them pydantic need not scan every installed package's
# entry points for plugins (a tenth of `gkeml render`'s run time). Only when the console
# script runs them, in a process of their own: commands that start processes (`submit
# --local`) and callers of `main([...])` keep their environment as it is.
NO_PLUGIN_SCAN = frozenset({"render", "validate", "catalog"})


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `gkeml` console script.

    Example:
        >>> main(["catalog", "tpus"])  # doctest: +ELLIPSIS
        name ...
        0
    """
    words = list(sys.argv[1:] if argv is None else argv)
    word = next((w for w in words if not w.startswith("-")), "")
    if argv is None and word in NO_PLUGIN_SCAN:
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # `--version` alone needs no command module.
    parser = _parser(COMMANDS.get(word) or ("" if words == ["--version"] else None))
    args, extra = parser.parse_known_args(words)
    # The innermost command parsed says what went wrong, with its own usage.
    command: argparse.ArgumentParser = getattr(args, "command_parser", parser)
    if extra:
        command.error(f"unrecognized arguments: {' '.join(extra)}")
    if not hasattr(args, "handler"):  # `gkeml setup`: the verbs of that command
        command.print_help()
        return 2
    try:
        return int(args.handler(args))
    except GkemlError as exc:
        from gkeml_sdk.cli.wording import cli_words

        # A command that can do something without a cluster says so (`without_cluster`).
        said = cli_words(str(exc), hasattr(args, "local"), getattr(args, "without_cluster", ""))
        print(f"gkeml: error: {said}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gkeml render spec.yaml | head`: the reader has had enough
        # Python would report the pipe again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


class CommandParser(argparse.ArgumentParser):
    """A parser of `gkeml` or one of its commands: each takes `--version`, and the innermost
    one that parsed a command line is kept in the result (`command_parser`), so an error or a
    missing verb shows that command's usage."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from gkeml_sdk import __version__

        self.add_argument("--version", action="version", version=f"gkeml {__version__}")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extra = super().parse_known_args(args, namespace)
        if not hasattr(parsed, "command_parser"):  # a nested command parsed first
            parsed.command_parser = self
        return parsed, extra


def _parser(named: str | None) -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="gkeml", description="GPU/TPU training and serving on GKE through Kueue."
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    # Help, or a word that is no command: every command, so argparse lists them all.
    modules = [named] if named else [] if named == "" else list(dict.fromkeys(COMMANDS.values()))
    for module in modules:
        importlib.import_module(f"gkeml_sdk.cli.{module}").register(commands)
    return parser


if __name__ == "__main__":
    sys.exit(main())
