"""`Manifests`: the ordered objects a spec compiles to, plus the Kueue Workload view."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gkeml_sdk.core.apimachinery import check_objects
from gkeml_sdk.core.objects import Obj


@dataclass(frozen=True, slots=True)
class Manifests:
    """Objects to apply, in order, and the Workload Kueue would derive from them.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> m = TrainingJob(name="hello", image="python:3.12", command=["python", "-V"]).compile()
        >>> kinds = [o["kind"] for o in m.objects]
        >>> kinds
        ['Job']
        >>> spec = m.workload["spec"]
        >>> sum(podset["count"] for podset in spec["podSets"])
        1
    """

    objects: list[Obj]
    """The Kubernetes objects to apply, in order; the one Kueue manages last (`main`)."""
    notes: tuple[str, ...] = ()
    """What the user should know before applying the objects, one sentence each: cluster
    prerequisites, risks to the job's work, choices made for them."""
    workload: Obj | None = field(default=None, compare=False)
    """The Workload Kueue would build from `main`; None where Kueue admits no single Workload
    (serving). It derives from the objects' spec, so equality leaves it out."""

    def __post_init__(self) -> None:
        # Every builder ends here: nothing the API server would refuse leaves compile().
        check_objects(self.objects)

    def to_yaml(self) -> str:
        """Every object as one multi-document YAML stream (byte-identical for equal specs)."""
        return dump_yaml(self.objects)

    @property
    def main(self) -> Obj:
        """The object Kueue manages (Job, JobSet, Deployment or LeaderWorkerSet)."""
        return self.objects[-1]

    def of_kind(self, kind: str) -> list[Obj]:
        """Objects of one kind, in order."""
        return [o for o in self.objects if o["kind"] == kind]

    def requests(self) -> dict[str, Any]:
        """Total resources requested by every pod of the Workload, e.g. {'nvidia.com/gpu': 16}."""
        totals: Counter[str] = Counter()
        for pod_set in (self.workload or {}).get("spec", {}).get("podSets", []):
            for container in pod_set["template"]["spec"]["containers"]:
                for name, value in container.get("resources", {}).get("requests", {}).items():
                    if isinstance(value, int):
                        totals[name] += value * pod_set["count"]
        return dict(totals)

    def __repr__(self) -> str:
        kinds = ", ".join(f"{o['kind']}/{o['metadata']['name']}" for o in self.objects)
        return f"Manifests({kinds})"

    def _repr_html_(self) -> str:
        import html

        return (
            f"<details><summary>{html.escape(repr(self))}</summary>"
            f"<pre>{html.escape(self.to_yaml())}</pre></details>"
        )


def dump_yaml(objects: list[Obj]) -> str:
    r"""Objects as a multi-document YAML stream, keys in their given order, repeated sub-dicts
    written in full (anchors such as &id001 confuse readers), multi-line strings as literal
    blocks (code and config files in ConfigMaps read as files).

    Example:
        >>> dump_yaml([{"kind": "A"}, {"kind": "B"}])
        'kind: A\n---\nkind: B\n'
    """
    from gkeml_sdk.core.yaml_out import dump_all

    return dump_all(objects, literal=True)
