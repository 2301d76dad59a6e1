"""`ClusterSetup`: the Kueue objects a platform team creates once, declared as the kinds of
nodes the cluster offers and the quota of each team (https://kueue.sigs.k8s.io/docs/concepts/)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import model_validator

from gkeml_sdk.core.spec_text import read_spec_file
from gkeml_sdk.setup.fields import ClusterSetupFields
from gkeml_sdk.setup.fields import Team as Team

if TYPE_CHECKING:
    from gkeml_sdk.core.manifests import Manifests
    from gkeml_sdk.runs.explain.explanation import Preview
    from gkeml_sdk.training.model import TrainingJob


class PoolRequest(Protocol):
    """A node pool as the GKE API's JSON (`gkeml_sdk.NodePool`)."""

    def to_dict(self) -> dict[str, Any]: ...


class ClusterSetup(ClusterSetupFields):
    """Kueue as code: ResourceFlavors per capacity and provisioning mode, ClusterQueues and
    LocalQueues per team in one cohort, WorkloadPriorityClasses, the ProvisioningRequest
    admission check for queued provisioning, and a TAS Topology.

    Example:
        >>> from gkeml_sdk import Accelerator, Capacity
        >>> setup = ClusterSetup(
        ...     capacity=[Capacity(accelerator=Accelerator("h100", count=8),
        ...                        provisioning=["standard", "queued"])],
        ...     teams=[Team(name="team-a", namespaces=["ml"], quota={"h100": 16})])
        >>> queues = setup.compile().of_kind("LocalQueue")
        >>> print(*(queue.get("metadata", {}).get("name") for queue in queues))
        team-a team-a-queued
    """

    @model_validator(mode="after")
    def _check(self) -> ClusterSetup:
        from gkeml_sdk.setup.rules import check_setup

        check_setup(self)
        return self

    @classmethod
    def from_file(cls, path: str | Path) -> ClusterSetup:
        """Read a setup from a YAML file (the fields of `ClusterSetup`)."""
        _, text = read_spec_file(
            path, fix="pass the path of a setup file (docs: From an empty cluster to a queued job)"
        )
        return cls.from_yaml(text)

    def check_region(self, region: str) -> None:
        """Raise `SpecError` when a capacity's accelerator is not offered in `region` (or a
        zone's region) by the availability table's source, naming regions that have it
        (`where_offered`); where the source was not read, nothing is refused.

        Example:
            >>> from gkeml_sdk import Capacity, TpuSlice
            >>> setup = ClusterSetup(capacity=[Capacity(accelerator=TpuSlice("v5p", "2x2x1"))],
            ...                      teams=[Team(name="a", quota={"v5p-2x2x1": 4})])
            >>> setup.check_region("us-east5")
            >>> setup.check_region("us-west1")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            gkeml_sdk.errors.SpecError: TPU v5p 2x2x1 in region 'us-west1'...
        """
        from gkeml_sdk.hardware.availability import check_region

        for capacity in self.capacity:
            shape = capacity.accelerator.pool_shape()
            keys = (shape.machine_type, capacity.accelerator.price_key)
            check_region(keys, shape.display, region)

    def for_worker(self) -> ClusterSetup:
        """The setup of each worker cluster: the same queues and flavors, without MultiKueue.

        Example:
            >>> from gkeml_sdk import Accelerator, Capacity, WorkerCluster
            >>> ClusterSetup(capacity=[Capacity(accelerator=Accelerator("l4"))], workers=[
            ...     WorkerCluster(name="w1")], teams=[Team(name="a", quota={"l4": 4})]
            ...     ).for_worker().workers
            []
        """
        return self.model_copy(update={"workers": []})

    def compile(self) -> Manifests:
        """The Kueue objects, in the order they can be applied."""
        from gkeml_sdk.setup.manifests import compile_setup

        return compile_setup(self)

    def preview(self, job: TrainingJob, pools: Iterable[PoolRequest] = ()) -> Preview:
        """What Kueue would do with `job` in a cluster holding this setup and nothing running
        yet: "will it fit?" asked of a setup file, with no cluster. With node `pools`
        (`NodePool`s) it also asks whether the admitted pods fit their nodes
        (`runs.explain.runs_where`): a job Kueue admits but no pool can hold never fits.

        Example:
            >>> from gkeml_sdk import Accelerator, Capacity, TrainingJob
            >>> setup = ClusterSetup(
            ...     capacity=[Capacity(accelerator=Accelerator("h100", count=8))],
            ...     teams=[Team(name="team-a", namespaces=["ml"], quota={"h100": 16})])
            >>> job = TrainingJob(name="ft", image="img", command=["python", "train.py"],
            ...                   accelerator=Accelerator("h100", count=8), nodes=4,
            ...                   namespace="ml", queue="team-a")
            >>> setup.preview(job).verdict
            <Verdict.NEVER_FITS: 'never fits'>
            >>> from gkeml_sdk import NodePool
            >>> spot = NodePool(name="h100", hardware=Accelerator("h100", count=8), spot=True,
            ...                 max_nodes=2)
            >>> print(setup.preview(job.model_copy(update={"nodes": 2}), [spot]).sentence)
            ... # doctest: +ELLIPSIS
            Never runs: ... pool h100: its nodes are tainted cloud.google.com/gke-spot=true:...
        """
        from gkeml_sdk.runs.explain.explanation import Preview, Verdict
        from gkeml_sdk.runs.explain.offline import queues_of
        from gkeml_sdk.runs.explain.preview import preview
        from gkeml_sdk.runs.explain.runs_where import where_it_runs

        compiled, objects = job.compile(), self.compile().objects
        found = preview(compiled.workload or {}, queues_of(objects, job.namespace, job.queue))
        requests = [r for pool in pools for r in pool.to_dict()["nodePools"]]
        if not requests or found.verdict == Verdict.NEVER_FITS:
            return found
        placed = where_it_runs(objects, requests, compiled.objects, workload=compiled.workload)
        if placed.runs:
            return replace(found, sentence=f"{found.sentence} {placed.reason}")
        return Preview(Verdict.NEVER_FITS, f"Never runs: {placed.reason}", found.evidence)
