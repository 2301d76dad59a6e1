"""`Manifests`: the ordered objects a spec compiles to, plus the Kueue Workload view."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Manifests:
    """Objects to apply, in order, and the Workload Kueue would derive from them.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> m = TrainingJob(name="hello", image="python:3.12", command=["python", "-V"]).compile()
        >>> [o["kind"] for o in m.objects], m.workload["spec"]["podSets"][0]["count"]
        (['Job'], 1)
    """

    objects: list[Obj]
    workload: Obj | None = None
    notes: tuple[str, ...] = field(default=())

    def to_yaml(self) -> str:
        """Every object as one multi-document YAML stream (byte-identical for equal specs)."""
        import yaml

        return yaml.dump_all(
            self.objects, Dumper=_no_alias_dumper(), sort_keys=False, default_flow_style=False
        )

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


def _no_alias_dumper() -> Any:
    """A SafeDumper that writes repeated sub-dicts in full (anchors such as &id001 confuse
    readers of manifests) and multi-line strings as literal blocks."""
    import yaml

    class NoAliasDumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    def text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        # Code and config files shipped in ConfigMaps read as files, not escaped strings.
        style = "|" if "\n" in data else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    NoAliasDumper.add_representer(str, text)
    return NoAliasDumper
