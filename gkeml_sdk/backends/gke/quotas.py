"""`QuotaCheck`: before node pools are created, or a job is submitted, read the project's
Compute Engine quotas through `google-cloud-compute` (`regions.get` for the regional metrics,
`projects.get` for GPUS_ALL_REGIONS) and say which pools at their ceilings would need more
than is free, or refuse a job no quota could ever hold."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gkeml_sdk.backends.gke.api_errors import as_gke_error
from gkeml_sdk.errors import ConfigError, GkeError, GkePermissionError
from gkeml_sdk.hardware.availability import region_named
from gkeml_sdk.hardware.quota_needs import QuotaAsk, QuotaNeed, quota_needs
from gkeml_sdk.nodepools.pool_quota import pool_quota_ask
from gkeml_sdk.setup.setup_quota import setup_quota_asks
from gkeml_sdk.training.job_quota import job_quota_asks

if TYPE_CHECKING:
    from gkeml_sdk.nodepools.fields import NodePoolFields
    from gkeml_sdk.setup.fields import ClusterSetupFields
    from gkeml_sdk.training.fields import TrainingJobFields


class QuotaCheck:
    """The Compute Engine quotas of `project` in `region` (or a zone's region), read before
    node pools are created: what pools at their ceilings, or a setup's capacities, would need
    beyond them.

    `credentials` and `client_options` go to `google-cloud-compute`'s clients (REST);
    without them, Application Default Credentials and compute.googleapis.com.

    Example:
        >>> check = QuotaCheck("my-project", "us-central1")  # doctest: +SKIP
        >>> check.for_pools([NodePool(name="h100", hardware=Accelerator("h100", count=8),
        ...                           max_nodes=2)])  # doctest: +SKIP
        ['pool h100 at max size needs 16 H100 GPUs in us-central1; your quota is 8 ...']
    """

    def __init__(
        self,
        project: str,
        region: str,
        *,
        credentials: Any = None,
        client_options: dict[str, Any] | None = None,
        clients: tuple[Any, Any] | None = None,
    ) -> None:
        self.project = project
        self.region = region_named(region)
        if clients is None:
            from google.cloud import compute_v1

            kw: dict[str, Any] = {"credentials": credentials, "transport": "rest",
                                  "client_options": client_options}  # fmt: skip
            clients = (compute_v1.RegionsClient(**kw), compute_v1.ProjectsClient(**kw))
        self.regions: Any = clients[0]
        self.projects: Any = clients[1]

    def for_pools(self, pools: Iterable[NodePoolFields]) -> list[str]:
        """`shortfalls` of node pools at their autoscaling ceilings."""
        asks = (a for a in map(pool_quota_ask, pools) if a is not None)
        return self.shortfalls(asks, fewer="lower max_nodes")

    def for_job(self, job: TrainingJobFields) -> list[str]:
        """Before `job` is submitted (`KubernetesSettings(quotas=...)`): raise `ConfigError`
        when every mode it accepts asks more GPUs or TPU chips at once than a quota's limit,
        so GKE could never create its nodes; else the sentences to warn with when no mode
        has room now (the rest of a quota is in use: the job runs on nodes already up, or
        waits), or a quota is unknown or unreadable. [] when a mode has room.
        """
        asks = job_quota_asks(job)
        lists: dict[bool, dict[str, tuple[float, float]]] = {}  # one read of each per check
        try:
            verdicts = [self._verdict(ask, lists) for ask in asks]
        except GkeError as exc:  # a 403, an unreachable API: the submission goes on unchecked
            return [f"job {job.name!r}: quotas not checked ({exc})"]
        if any(not v.said for v in verdicts):
            return []
        said = [sentence for v in verdicts for sentence in v.said]
        if verdicts and all(v.room is not None for v in verdicts):
            room = max(v.room or 0 for v in verdicts)
            raise ConfigError(f"{'; '.join(said)}. {_job_fixes(job, asks[0], room)}")
        return said

    def _verdict(
        self, ask: QuotaAsk, lists: dict[bool, dict[str, tuple[float, float]]]
    ) -> _Verdict:
        found = quota_needs([ask])
        if found.unchecked:
            return _Verdict(list(found.unchecked), None)
        said, rooms = [], []
        for need in found.needs:
            if need.regional not in lists:
                lists[need.regional] = self._quotas(project_wide=not need.regional)
            quota = lists[need.regional].get(need.metric)
            limit, usage = quota or (0.0, 0.0)
            where = f"in {self.region}" if need.regional else "across all regions"
            wanted = f"{ask.name} needs {need.amount} {need.unit} {where} at once"
            if quota is None:
                rooms.append(0)
                said.append(f"{wanted}; Compute Engine lists no {need.metric} quota {where}")
            elif need.amount > limit:
                rooms.append(int(limit))
                said.append(
                    f"{wanted}, more than its quota allows ({need.metric}: limit "
                    f"{int(limit)}, {int(usage)} in use, {int(limit - usage)} left)"
                )
            elif need.amount > limit - usage:
                said.append(
                    f"{wanted}; {int(limit - usage)} are left of {need.metric} (limit "
                    f"{int(limit)}, {int(usage)} in use): it runs on nodes already up, or waits "
                    "until other VMs free the quota; raise it under IAM & Admin > Quotas"
                )
        return _Verdict(said, min(rooms) if rooms else None)

    def for_setup(self, setup: ClusterSetupFields) -> list[str]:
        """`shortfalls` of a setup's capacities, each mode holding the teams' quotas."""
        return self.shortfalls(setup_quota_asks(setup), fewer="lower the teams' quota")

    def shortfalls(self, asks: Iterable[QuotaAsk], fewer: str = "ask for fewer") -> list[str]:
        """One sentence per quota `asks` would exceed (each naming the metric, its limit and
        use, and what would fit: more quota, `fewer`, another region), then one per ask whose
        quota no known metric covers; empty when every quota suffices.

        Raises `ConfigError` when the region does not exist or the quotas cannot be read.
        """
        found = quota_needs(asks)
        said = []
        regional = self._quotas(project_wide=False) if found.needs else {}
        project = (
            self._quotas(project_wide=True) if any(not n.regional for n in found.needs) else {}
        )
        for need in found.needs:
            quota = (regional if need.regional else project).get(need.metric)
            sentence = _shortfall(need, quota, self.region, fewer)
            if sentence:
                said.append(sentence)
        return said + list(found.unchecked)

    def _quotas(self, *, project_wide: bool) -> dict[str, tuple[float, float]]:
        from google.api_core import exceptions as api

        where = "the project" if project_wide else self.region
        try:
            if project_wide:
                found = self.projects.get(project=self.project)
            else:
                found = self.regions.get(project=self.project, region=self.region)
        except api.Forbidden as exc:  # Compute Engine answers a missing permission 403
            raise GkePermissionError(
                f"read the Compute Engine quotas of {where}",
                status=403,
                reason="FORBIDDEN",
                message=_api_message(exc),
                hint="grant the caller roles/compute.viewer on the project (it holds "
                "compute.regions.get and compute.projects.get)",
            ) from None
        except api.NotFound:
            raise ConfigError(
                f"Compute Engine has no region {self.region!r} in project {self.project}: "
                "pass the cluster's region or zone (gcloud compute regions list)"
            ) from None
        except Exception as exc:
            raise as_gke_error(f"read the Compute Engine quotas of {where}", exc) or exc from None
        return {q.metric: (float(q.limit), float(q.usage)) for q in found.quotas}


def _api_message(exc: Any) -> str:
    """The API's own message from its JSON error (api_core prefixes the method and URL)."""
    try:
        return str(exc.response.json()["error"]["message"])
    except Exception:
        return str(exc.message)


def _shortfall(need: QuotaNeed, quota: tuple[float, float] | None, region: str, fewer: str) -> str:
    several = len(need.askers) > 1
    who = f"{', '.join(need.askers)} at max size need{'' if several else 's'}"
    where = f"in {region}" if need.regional else "across all regions"
    wanted = f"{who} {need.amount} {need.unit} {where}"
    if quota is None:
        return (
            f"{wanted}; Compute Engine lists no {need.metric} quota {where} for this project: "
            "request it under IAM & Admin > Quotas, or use a region that has it"
        )
    limit, usage = quota
    free = int(limit - usage)
    if need.amount <= free:
        return ""
    used = f", {int(usage)} in use" if usage else ""
    return (
        f"{wanted}; your quota is {free} ({need.metric}: limit {int(limit)}{used}): raise it "
        f"under IAM & Admin > Quotas, {fewer}, or use another region"
    )


@dataclass(frozen=True, slots=True)
class _Verdict:
    """What one mode's quotas say of a job: a sentence per quota short of it (none: it has
    room now), and `room`, the most units the tightest quota's limit ever allows, when a
    limit is below the ask (None: it fits the limits)."""

    said: list[str]
    room: int | None


def _job_fixes(job: TrainingJobFields, ask: QuotaAsk, room: int) -> str:
    """What would let `job` run when no quota's limit could hold it: `room` units at most."""
    fixes = [f"raise the quotas named to {ask.units} under IAM & Admin > Quotas"]
    per_node = ask.units // job.nodes if ask.units % job.nodes == 0 else 0
    if ask.gpu and per_node and room >= per_node:
        fixes.append(f"nodes={room // per_node} ({room // per_node * per_node} GPUs)")
    fixes.append(f"a cluster in a region with quota for it (where_offered({ask.key!r}))")
    return "What would work: " + "; or ".join(fixes)
