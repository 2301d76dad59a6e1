"""`QuotaCheck`: before node pools are created, read the project's Compute Engine quotas
through `google-cloud-compute` (`regions.get` for the regional metrics, `projects.get` for
GPUS_ALL_REGIONS) and say which pools at their ceilings would need more than is free."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gkeml_sdk.backends.gke.api_errors import as_gke_error
from gkeml_sdk.errors import ConfigError, GkePermissionError
from gkeml_sdk.hardware.availability import region_named
from gkeml_sdk.hardware.quota_needs import QuotaAsk, QuotaNeed, quota_needs
from gkeml_sdk.nodepools.pool_quota import pool_quota_ask
from gkeml_sdk.setup.setup_quota import setup_quota_asks

if TYPE_CHECKING:
    from gkeml_sdk.nodepools.fields import NodePoolFields
    from gkeml_sdk.setup.fields import ClusterSetupFields


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
