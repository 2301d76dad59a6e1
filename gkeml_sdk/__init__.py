"""gkeml: typed GPU/TPU training and LLM serving on GKE through Kueue.

Names are imported on first use, so `import gkeml_sdk` stays cheap for tools that embed it.

Example:
    >>> from gkeml_sdk import Accelerator, TrainingJob
    >>> job = TrainingJob(name="ft", image="img", command=["python", "train.py"],
    ...                   accelerator=Accelerator("h100", count=8), nodes=2, spot=True)
    >>> job.compile().main["kind"]
    'JobSet'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gkeml_sdk.version import __version__

_EXPORTS = {
    "Accelerator": "gkeml_sdk.spec.accelerator",
    "TpuSlice": "gkeml_sdk.spec.tpu",
    "TrainingJob": "gkeml_sdk.spec.job",
    "TopologyPlacement": "gkeml_sdk.spec.placement",
    "ClusterSetup": "gkeml_sdk.spec.setup",
    "Capacity": "gkeml_sdk.spec.setup",
    "Team": "gkeml_sdk.spec.setup",
    "SetupPlan": "gkeml_sdk.cluster.setup",
    "ServeModel": "gkeml_sdk.spec.serving.model",
    "Autoscaling": "gkeml_sdk.spec.serving.autoscaling",
    "Routing": "gkeml_sdk.spec.serving.routing",
    "Route": "gkeml_sdk.spec.serving.routing",
    "ModelSize": "gkeml_sdk.spec.serving.model_size",
    "ServePlan": "gkeml_sdk.spec.serving.plan",
    "Tenant": "gkeml_sdk.spec.tenancy.tenant",
    "TenantModel": "gkeml_sdk.spec.tenancy.tenant",
    "Tier": "gkeml_sdk.spec.tenancy.tier",
    "RetryPolicy": "gkeml_sdk.spec.retry",
    "SecretRef": "gkeml_sdk.spec.secrets",
    "GcsFuse": "gkeml_sdk.spec.volumes",
    "GcsCache": "gkeml_sdk.spec.volumes",
    "Pvc": "gkeml_sdk.spec.volumes",
    "HyperdiskML": "gkeml_sdk.spec.volume_disks",
    "Parallelstore": "gkeml_sdk.spec.volume_disks",
    "CostEstimate": "gkeml_sdk.spec.cost",
    "PriceBook": "gkeml_sdk.catalog.prices",
    "Manifests": "gkeml_sdk.compile.manifests",
    "Client": "gkeml_sdk.client",
    "KubernetesSettings": "gkeml_sdk.cluster.api.config",
    "ApiRetrySettings": "gkeml_sdk.cluster.api.transport",
    "LocalSettings": "gkeml_sdk.local.options",
    "LocalOptions": "gkeml_sdk.local.options",
    "ServeHandle": "gkeml_sdk.cluster.serving.handle",
    "StandbyManager": "gkeml_sdk.cluster.tenants.manager",
    "LeaseTiming": "gkeml_sdk.cluster.tenants.lease",
    "DrillReport": "gkeml_sdk.cluster.tenants.drill",
    "load_specs": "gkeml_sdk.specfile",
    "compile_tenants": "gkeml_sdk.compile.tenancy.tenant",
    "gpu_models": "gkeml_sdk.hardware",
    "tpu_generations": "gkeml_sdk.hardware",
    "Run": "gkeml_sdk.run",
    "RunState": "gkeml_sdk.run",
    "RunStatus": "gkeml_sdk.run",
    "FailureCause": "gkeml_sdk.run",
    "Transition": "gkeml_sdk.run",
    "runs_html": "gkeml_sdk.pictures.runs",
    "Explanation": "gkeml_sdk.explanation",
    "Evidence": "gkeml_sdk.explanation",
    "Category": "gkeml_sdk.explanation",
    "Preview": "gkeml_sdk.explanation",
    "Verdict": "gkeml_sdk.explanation",
    "GkemlError": "gkeml_sdk.errors",
    "SpecError": "gkeml_sdk.errors",
    "ConfigError": "gkeml_sdk.errors",
    "NoClusterError": "gkeml_sdk.errors",
    "ClusterError": "gkeml_sdk.errors",
    "NotFoundError": "gkeml_sdk.errors",
    "RunTimeoutError": "gkeml_sdk.errors",
    "GkeError": "gkeml_sdk.errors",
    "QuotaError": "gkeml_sdk.errors",
    "GkePermissionError": "gkeml_sdk.errors",
    "NodePool": "gkeml_sdk.gke.node_pool",
    "NodeNetwork": "gkeml_sdk.gke.node_pool",
    "GkeClient": "gkeml_sdk.gke.client",
    "load_node_pools": "gkeml_sdk.gke.pool_file",
}

__all__ = [
    "Accelerator",
    "ApiRetrySettings",
    "Autoscaling",
    "Capacity",
    "Category",
    "Client",
    "ClusterError",
    "ClusterSetup",
    "ConfigError",
    "CostEstimate",
    "DrillReport",
    "Evidence",
    "Explanation",
    "FailureCause",
    "GcsCache",
    "GcsFuse",
    "GkeClient",
    "GkeError",
    "GkePermissionError",
    "GkemlError",
    "HyperdiskML",
    "KubernetesSettings",
    "LeaseTiming",
    "LocalOptions",
    "LocalSettings",
    "Manifests",
    "ModelSize",
    "NoClusterError",
    "NodeNetwork",
    "NodePool",
    "NotFoundError",
    "Parallelstore",
    "Preview",
    "PriceBook",
    "Pvc",
    "QuotaError",
    "RetryPolicy",
    "Route",
    "Routing",
    "Run",
    "RunState",
    "RunStatus",
    "RunTimeoutError",
    "SecretRef",
    "ServeHandle",
    "ServeModel",
    "ServePlan",
    "SetupPlan",
    "SpecError",
    "StandbyManager",
    "Team",
    "Tenant",
    "TenantModel",
    "Tier",
    "TopologyPlacement",
    "TpuSlice",
    "TrainingJob",
    "Transition",
    "Verdict",
    "__version__",
    "compile_tenants",
    "gpu_models",
    "load_node_pools",
    "load_specs",
    "runs_html",
    "tpu_generations",
]

if TYPE_CHECKING:
    from gkeml_sdk.catalog.prices import PriceBook
    from gkeml_sdk.client import Client
    from gkeml_sdk.cluster.api.config import KubernetesSettings
    from gkeml_sdk.cluster.api.transport import ApiRetrySettings
    from gkeml_sdk.cluster.serving.handle import ServeHandle
    from gkeml_sdk.cluster.setup import SetupPlan
    from gkeml_sdk.cluster.tenants.drill import DrillReport
    from gkeml_sdk.cluster.tenants.lease import LeaseTiming
    from gkeml_sdk.cluster.tenants.manager import StandbyManager
    from gkeml_sdk.compile.manifests import Manifests
    from gkeml_sdk.compile.tenancy.tenant import compile_tenants
    from gkeml_sdk.errors import (
        ClusterError,
        ConfigError,
        GkeError,
        GkemlError,
        GkePermissionError,
        NoClusterError,
        NotFoundError,
        QuotaError,
        RunTimeoutError,
        SpecError,
    )
    from gkeml_sdk.explanation import Category, Evidence, Explanation, Preview, Verdict
    from gkeml_sdk.gke.client import GkeClient
    from gkeml_sdk.gke.node_pool import NodeNetwork, NodePool
    from gkeml_sdk.gke.pool_file import load_node_pools
    from gkeml_sdk.hardware import gpu_models, tpu_generations
    from gkeml_sdk.local.options import LocalOptions, LocalSettings
    from gkeml_sdk.pictures.runs import runs_html
    from gkeml_sdk.run import FailureCause, Run, RunState, RunStatus, Transition
    from gkeml_sdk.spec.accelerator import Accelerator
    from gkeml_sdk.spec.cost import CostEstimate
    from gkeml_sdk.spec.job import TrainingJob
    from gkeml_sdk.spec.placement import TopologyPlacement
    from gkeml_sdk.spec.retry import RetryPolicy
    from gkeml_sdk.spec.secrets import SecretRef
    from gkeml_sdk.spec.serving.autoscaling import Autoscaling
    from gkeml_sdk.spec.serving.model import ServeModel
    from gkeml_sdk.spec.serving.model_size import ModelSize
    from gkeml_sdk.spec.serving.plan import ServePlan
    from gkeml_sdk.spec.serving.routing import Route, Routing
    from gkeml_sdk.spec.setup import Capacity, ClusterSetup, Team
    from gkeml_sdk.spec.tenancy.tenant import Tenant, TenantModel
    from gkeml_sdk.spec.tenancy.tier import Tier
    from gkeml_sdk.spec.tpu import TpuSlice
    from gkeml_sdk.spec.volume_disks import HyperdiskML, Parallelstore
    from gkeml_sdk.spec.volumes import GcsCache, GcsFuse, Pvc
    from gkeml_sdk.specfile import load_specs


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'gkeml_sdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return __all__
