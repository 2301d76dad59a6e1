"""`python -m gkeml_sdk.cli`: the `gkeml` command, for environments without its script."""

import sys

from gkeml_sdk.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
