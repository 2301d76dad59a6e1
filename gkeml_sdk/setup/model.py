"""`ClusterSetup`: the Kueue objects a platform team creates once, declared as the kinds of
nodes the cluster offers and the quota of each team (https://kueue.sigs.k8s.io/docs/concepts/)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import model_validator

from gkeml_sdk.core.spec_text import read_spec_file
from gkeml_sdk.setup.fields import ClusterSetupFields
from gkeml_sdk.setup.fields import Team as Team

if TYPE_CHECKING:
    from gkeml_sdk.core.manifests import Manifests
    from gkeml_sdk.runs.explain.explanation import Preview
    from gkeml_sdk.training.model import TrainingJob


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

    def preview(self, job: TrainingJob) -> Preview:
        """What Kueue would do with `job` in a cluster holding this setup and nothing running
        yet: "will it fit?" asked of a setup file, with no cluster.

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
        """
        from gkeml_sdk.runs.explain.offline import queues_of
        from gkeml_sdk.runs.explain.preview import preview

        queues = queues_of(self.compile().objects, job.namespace, job.queue)
        return preview(job.compile().workload or {}, queues)
