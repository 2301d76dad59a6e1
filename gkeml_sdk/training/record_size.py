"""The run record's size rule: a job's run record is one ConfigMap (its spec, its code files,
its attempts and history), and the API server refuses a ConfigMap whose data values total more
than 1 MiB (`ValidateConfigMap`: "Too long: may not be more than 1048576 bytes"). Everything
the record holds is counted: the code, the spec as written into it (env, command, args,
labels, annotations included) and the room its attempts and history are kept within."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.environment import CONFIGMAP_MAX_BYTES, RECORD_STATE_ALLOWANCE
from gkeml_sdk.core.model import fail

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields

# What the spec's fields besides its strings take in YAML: keys, numbers, nesting.
_SPEC_FRAME_BYTES = 16 * 1024
# The most YAML's escapes grow a string: a control character (1 byte) becomes \x01 (4).
_ESCAPE_GROWTH = 4


def record_bytes(job: TrainingJobFields) -> int:
    """What the run record of `job` holds before any attempt: its code files (keys and text),
    their paths, and the spec as the record writes it (YAML, without the files).

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="a", image="i", command=["x"], env={"A": "1" * 1000})
        >>> 1000 < record_bytes(job) < 1200
        True
    """
    from gkeml_sdk.core.yaml_out import dump_all
    from gkeml_sdk.training.code import config_map_key

    code = sum(len(config_map_key(p)) + len(t.encode()) + len(p) + 4 for p, t in job.files.items())
    spec = job.model_dump(mode="json", exclude_defaults=True)
    spec.pop("files", None)
    return code + len(dump_all([spec], literal=False).encode())


def check_record_size(job: TrainingJobFields) -> None:
    """Refuse a job whose run record the API server would refuse. The exact size (a YAML
    dump) is taken only for a job whose strings come near the limit.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> check_record_size(TrainingJob(name="a", image="i", command=["x"]))
    """
    limit = CONFIGMAP_MAX_BYTES - RECORD_STATE_ALLOWANCE
    code, strings = _strings_bytes(job)
    if code + _ESCAPE_GROWTH * strings + _SPEC_FRAME_BYTES <= limit:
        return  # fits even if YAML escaped every character of the spec
    size = record_bytes(job)
    if size > limit:
        raise fail(
            f"the run record of {job.name!r} would hold {size / 1024:.0f} KiB of code and spec, "
            f"above the {limit // 1024} KiB it may",
            rule=f"the run record is one ConfigMap, whose data the API server caps at "
            f"{CONFIGMAP_MAX_BYTES} bytes; {RECORD_STATE_ALLOWANCE // 1024} KiB of it stay for "
            "the run's attempts and history",
            fix="bake the code into the image (image=...), keep large values out of env, args "
            "and annotations (a bucket, a ConfigMap of your own), or read them at run time",
            field="files" if job.files else "env",
        )


def _strings_bytes(job: TrainingJobFields) -> tuple[int, int]:
    """The bytes of the code files (stored as they are), and of the spec's strings (written
    into its YAML, escaped where YAML must)."""
    code = sum(2 * len(p) + len(t.encode()) for p, t in job.files.items())
    strings = [*job.env, *job.env.values(), *(job.command or []), *job.args, *job.files]
    strings += [*job.labels, *job.labels.values(), *job.annotations, *job.annotations.values()]
    return code, sum(len(s.encode()) for s in strings)
