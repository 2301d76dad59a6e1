"""The shared folder the tests read, never copy: the CRD schemas (`crds/`) and the recordings
of a real kube-apiserver with Kueue and JobSet (`fixtures/`). `$GKEML_SHARED` names it; else
it is `../shared` beside the repository. Tests that need it skip, naming where they looked,
and the run ends with one line counting them (tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(os.environ.get("GKEML_SHARED") or Path(__file__).resolve().parents[2] / "shared")
