"""torchrun's command line as recorded from `torch.distributed.run.get_args_parser`
(pytorch/pytorch, torch/distributed/run.py at 010929fd3f401c3868310396e6a91ed95aa0305b): every
option with its spellings and whether it takes a value, then the training script and the rest.

A CPU-only `torch` wheel is not on PyPI (its Linux wheel brings CUDA, gigabytes), so the tests
check the presets' commands against this record instead of the installed parser. Like the real
one it is an `argparse` parser with `allow_abbrev` left on and `nargs=REMAINDER` after the
script, so an option after the script belongs to the script."""

from __future__ import annotations

import argparse

# (spellings, takes a value, type); options with no value are store_true.
OPTIONS: tuple[tuple[tuple[str, ...], bool, type], ...] = (
    (("--nnodes",), True, str),
    (("--nproc-per-node", "--nproc_per_node"), True, str),
    (("--rdzv-backend", "--rdzv_backend"), True, str),
    (("--rdzv-endpoint", "--rdzv_endpoint"), True, str),
    (("--rdzv-id", "--rdzv_id"), True, str),
    (("--rdzv-conf", "--rdzv_conf"), True, str),
    (("--standalone",), False, bool),
    (("--max-restarts", "--max_restarts"), True, int),
    (("--monitor-interval", "--monitor_interval"), True, float),
    (("--start-method", "--start_method"), True, str),
    (("--event-log-handler", "--event_log_handler"), True, str),
    (("--role",), True, str),
    (("-m", "--module"), False, bool),
    (("--no-python", "--no_python"), False, bool),
    (("--run-path", "--run_path"), False, bool),
    (("--log-dir", "--log_dir"), True, str),
    (("-r", "--redirects"), True, str),
    (("-t", "--tee"), True, str),
    (("--local-ranks-filter", "--local_ranks_filter"), True, str),
    (("--node-rank", "--node_rank"), True, int),
    (("--master-addr", "--master_addr"), True, str),
    (("--master-port", "--master_port"), True, int),
    (("--local-addr", "--local_addr"), True, str),
    (("--logs-specs", "--logs_specs"), True, str),
    (("--numa-binding", "--numa_binding"), True, str),
    (("--signals-to-handle", "--signals_to_handle"), True, str),
)


class ParseError(Exception):
    """What argparse would print before exiting with status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ParseError(message)


def torchrun_parser() -> argparse.ArgumentParser:
    """A parser that accepts what torchrun accepts and refuses what it refuses."""
    parser = _Parser(prog="torchrun")
    for spellings, takes_value, kind in OPTIONS:
        if takes_value:
            parser.add_argument(*spellings, type=kind)
        else:
            parser.add_argument(*spellings, action="store_true")
    parser.add_argument("training_script", type=str)
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return parser


def parse_torchrun(argv: list[str]) -> argparse.Namespace:
    """`argv` (after the word `torchrun`) as torchrun reads it; `ParseError` if it would not."""
    return torchrun_parser().parse_args(argv)
