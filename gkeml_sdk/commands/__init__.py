"""Subcommands of the `gkeml` CLI, one module per group; each has `register(subparsers)`."""
