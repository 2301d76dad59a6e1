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

from typing import TYPE_CHECKING

from gkeml_sdk.core.lazy_exports import lazy_exports
from gkeml_sdk.version import __version__

_EXPORTS = {
    "Accelerator": "gkeml_sdk.hardware.accelerator",
    "TpuSlice": "gkeml_sdk.hardware.tpu_slice",
    "CpuMachine": "gkeml_sdk.hardware.cpu_machine",
    "TrainingJob": "gkeml_sdk.training.model",
    "TopologyPlacement": "gkeml_sdk.scheduling.placement",
    "ClusterSetup": "gkeml_sdk.setup.model",
    "Capacity": "gkeml_sdk.setup.capacity_model",
    "Team": "gkeml_sdk.setup.model",
    "WorkerCluster": "gkeml_sdk.setup.multikueue",
    "SetupPlan": "gkeml_sdk.backends.kubernetes.setup.setup_apply",
    "ServeModel": "gkeml_sdk.serving.model",
    "Autoscaling": "gkeml_sdk.serving.rollout",
    "Rollout": "gkeml_sdk.serving.rollout",
    "SpotMix": "gkeml_sdk.serving.rollout",
    "Routing": "gkeml_sdk.serving.routing",
    "Route": "gkeml_sdk.serving.routing",
    "ModelSize": "gkeml_sdk.serving.sizing",
    "ServePlan": "gkeml_sdk.serving.plan",
    "Tenant": "gkeml_sdk.tenancy.model",
    "TenantModel": "gkeml_sdk.tenancy.model",
    "Tier": "gkeml_sdk.tenancy.tier",
    "RetryPolicy": "gkeml_sdk.runs.retry",
    "SecretRef": "gkeml_sdk.core.secret_ref",
    "GcsFuse": "gkeml_sdk.storage.volumes",
    "GcsCache": "gkeml_sdk.storage.volumes",
    "Pvc": "gkeml_sdk.storage.volumes",
    "HyperdiskML": "gkeml_sdk.storage.disks",
    "Parallelstore": "gkeml_sdk.storage.disks",
    "CostEstimate": "gkeml_sdk.pricing.model",
    "PriceBook": "gkeml_sdk.pricing.catalog",
    "price_table": "gkeml_sdk.pricing.cells",
    "Manifests": "gkeml_sdk.core.manifests",
    "Client": "gkeml_sdk.client",
    "KubernetesSettings": "gkeml_sdk.backends.kubernetes.api.config",
    "ApiRetrySettings": "gkeml_sdk.backends.kubernetes.api.transport",
    "LocalSettings": "gkeml_sdk.backends.local.plan.local_options",
    "LocalOptions": "gkeml_sdk.backends.local.plan.local_options",
    "ServeHandle": "gkeml_sdk.backends.kubernetes.serving.serve_handle",
    "StandbyManager": "gkeml_sdk.backends.kubernetes.standby.manager",
    "run_controller": "gkeml_sdk.backends.kubernetes.controller.run_controller",
    "controller_manifests": "gkeml_sdk.backends.kubernetes.controller.run_controller",
    "install_controller": "gkeml_sdk.backends.kubernetes.controller.run_controller",
    "LeaseTiming": "gkeml_sdk.backends.kubernetes.api.lease",
    "DrillReport": "gkeml_sdk.backends.kubernetes.standby.drill",
    "load_specs": "gkeml_sdk.files",
    "python_objects": "gkeml_sdk.files",
    "compile_tenants": "gkeml_sdk.tenancy.manifests",
    "gpu_models": "gkeml_sdk.hardware.listing",
    "tpu_generations": "gkeml_sdk.hardware.listing",
    "Run": "gkeml_sdk.runs.handle",
    "RunState": "gkeml_sdk.runs.handle",
    "RunStatus": "gkeml_sdk.runs.handle",
    "FailureCause": "gkeml_sdk.runs.handle",
    "Transition": "gkeml_sdk.runs.handle",
    "runs_html": "gkeml_sdk.runs.handle",
    "Explanation": "gkeml_sdk.runs.explain.explanation",
    "Evidence": "gkeml_sdk.runs.explain.explanation",
    "Category": "gkeml_sdk.runs.explain.explanation",
    "Preview": "gkeml_sdk.runs.explain.explanation",
    "Verdict": "gkeml_sdk.runs.explain.explanation",
    "where_it_runs": "gkeml_sdk.runs.explain.runs_where",
    "WhereItRuns": "gkeml_sdk.runs.explain.runs_where",
    "GkemlError": "gkeml_sdk.errors",
    "SpecError": "gkeml_sdk.errors",
    "ConfigError": "gkeml_sdk.errors",
    "NoClusterError": "gkeml_sdk.errors",
    "ClusterError": "gkeml_sdk.errors",
    "NotFoundError": "gkeml_sdk.errors",
    "RunExistsError": "gkeml_sdk.errors",
    "RunTimeoutError": "gkeml_sdk.errors",
    "GkeError": "gkeml_sdk.errors",
    "QuotaError": "gkeml_sdk.errors",
    "GkePermissionError": "gkeml_sdk.errors",
    "NodePool": "gkeml_sdk.nodepools.model",
    "NodeNetwork": "gkeml_sdk.nodepools.model",
    "GkeClient": "gkeml_sdk.backends.gke.gke_client",
    "QuotaCheck": "gkeml_sdk.backends.gke.quotas",
    "where_offered": "gkeml_sdk.scheduling.where",
    "node_pool_messages": "gkeml_sdk.backends.gke.messages",
    "node_pool_requests": "gkeml_sdk.backends.gke.messages",
    "load_node_pools": "gkeml_sdk.nodepools.pool_file",
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
    "CpuMachine",
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
    "QuotaCheck",
    "QuotaError",
    "RetryPolicy",
    "Rollout",
    "Route",
    "Routing",
    "Run",
    "RunExistsError",
    "RunState",
    "RunStatus",
    "RunTimeoutError",
    "SecretRef",
    "ServeHandle",
    "ServeModel",
    "ServePlan",
    "SetupPlan",
    "SpecError",
    "SpotMix",
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
    "WhereItRuns",
    "WorkerCluster",
    "__version__",
    "compile_tenants",
    "controller_manifests",
    "gpu_models",
    "install_controller",
    "load_node_pools",
    "load_specs",
    "node_pool_messages",
    "node_pool_requests",
    "price_table",
    "python_objects",
    "run_controller",
    "runs_html",
    "tpu_generations",
    "where_it_runs",
    "where_offered",
]

if TYPE_CHECKING:
    from gkeml_sdk.backends.gke.gke_client import GkeClient
    from gkeml_sdk.backends.gke.messages import node_pool_messages, node_pool_requests
    from gkeml_sdk.backends.gke.quotas import QuotaCheck
    from gkeml_sdk.backends.kubernetes.api.config import KubernetesSettings
    from gkeml_sdk.backends.kubernetes.api.lease import LeaseTiming
    from gkeml_sdk.backends.kubernetes.api.transport import ApiRetrySettings
    from gkeml_sdk.backends.kubernetes.controller.run_controller import (
        controller_manifests,
        install_controller,
        run_controller,
    )
    from gkeml_sdk.backends.kubernetes.serving.serve_handle import ServeHandle
    from gkeml_sdk.backends.kubernetes.setup.setup_apply import SetupPlan
    from gkeml_sdk.backends.kubernetes.standby.drill import DrillReport
    from gkeml_sdk.backends.kubernetes.standby.manager import StandbyManager
    from gkeml_sdk.backends.local.plan.local_options import LocalOptions, LocalSettings
    from gkeml_sdk.client import Client
    from gkeml_sdk.core.manifests import Manifests
    from gkeml_sdk.core.secret_ref import SecretRef
    from gkeml_sdk.errors import (
        ClusterError,
        ConfigError,
        GkeError,
        GkemlError,
        GkePermissionError,
        NoClusterError,
        NotFoundError,
        QuotaError,
        RunExistsError,
        RunTimeoutError,
        SpecError,
    )
    from gkeml_sdk.files import load_specs, python_objects
    from gkeml_sdk.hardware.accelerator import Accelerator
    from gkeml_sdk.hardware.cpu_machine import CpuMachine
    from gkeml_sdk.hardware.listing import gpu_models, tpu_generations
    from gkeml_sdk.hardware.tpu_slice import TpuSlice
    from gkeml_sdk.nodepools.model import NodeNetwork, NodePool
    from gkeml_sdk.nodepools.pool_file import load_node_pools
    from gkeml_sdk.pricing.catalog import PriceBook
    from gkeml_sdk.pricing.cells import price_table
    from gkeml_sdk.pricing.model import CostEstimate
    from gkeml_sdk.runs.explain.explanation import Category, Evidence, Explanation, Preview, Verdict
    from gkeml_sdk.runs.explain.runs_where import WhereItRuns, where_it_runs
    from gkeml_sdk.runs.handle import (
        FailureCause,
        Run,
        RunState,
        RunStatus,
        Transition,
        runs_html,
    )
    from gkeml_sdk.runs.retry import RetryPolicy
    from gkeml_sdk.scheduling.placement import TopologyPlacement
    from gkeml_sdk.scheduling.where import where_offered
    from gkeml_sdk.serving.model import ServeModel
    from gkeml_sdk.serving.plan import ServePlan
    from gkeml_sdk.serving.rollout import Autoscaling, Rollout, SpotMix
    from gkeml_sdk.serving.routing import Route, Routing
    from gkeml_sdk.serving.sizing import ModelSize
    from gkeml_sdk.setup.capacity_model import Capacity
    from gkeml_sdk.setup.model import ClusterSetup, Team
    from gkeml_sdk.setup.multikueue import WorkerCluster
    from gkeml_sdk.storage.disks import HyperdiskML, Parallelstore
    from gkeml_sdk.storage.volumes import GcsCache, GcsFuse, Pvc
    from gkeml_sdk.tenancy.manifests import compile_tenants
    from gkeml_sdk.tenancy.model import Tenant, TenantModel
    from gkeml_sdk.tenancy.tier import Tier
    from gkeml_sdk.training.model import TrainingJob


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())
