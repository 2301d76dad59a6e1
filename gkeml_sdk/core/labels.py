"""Labels every object gkeml creates carries, and the names of a run's attempts: the
builders of every feature stamp them and the backends select by them."""

from __future__ import annotations

from gkeml_sdk.core import environment as c

RUN_ID_LABEL = "gkeml.dev/run-id"
ATTEMPT_LABEL = "gkeml.dev/attempt"


def attempt_name(run: str, attempt: int) -> str:
    """Deterministic object name of an attempt of run `run`, so a retried or restarted client
    can never create the same attempt twice. Run names may not contain `--` (the spec refuses
    it), so no attempt of one run can carry the name of another run or of its attempts.

    Example:
        >>> attempt_name("llama-ft", 1), attempt_name("llama-ft", 2)
        ('llama-ft', 'llama-ft--r2')
    """
    return run if attempt == 1 else f"{run}{c.ATTEMPT_SEPARATOR}r{attempt}"


def record_name(run: str) -> str:
    """Name of run `run`'s record ConfigMap, which also carries its code files.

    Example:
        >>> record_name("ft")
        'ft-gkeml-run'
    """
    return f"{run}-gkeml-run"


def sdk_labels() -> dict[str, str]:
    """Labels that mark every top-level object gkeml creates, with the SDK version."""
    from gkeml_sdk.version import __version__

    return {"app.kubernetes.io/managed-by": "gkeml", "gkeml.dev/sdk-version": __version__}
