"""gkeml: typed GPU/TPU training and LLM serving on GKE through Kueue.

Example:
    >>> from gkeml_sdk import Accelerator, TrainingJob
    >>> job = TrainingJob(name="ft", image="img", command=["python", "train.py"],
    ...                   accelerator=Accelerator("h100", count=8), nodes=2, spot=True)
    >>> job.compile().main["kind"]
    'JobSet'
"""

from gkeml_sdk.catalog.prices import PriceBook
from gkeml_sdk.compile.manifests import Manifests
from gkeml_sdk.errors import ClusterError, ConfigError, GkemlError, SpecError
from gkeml_sdk.run import FailureCause, Run, RunState, RunStatus, Transition
from gkeml_sdk.spec.accelerator import Accelerator, TpuSlice
from gkeml_sdk.spec.cost import CostEstimate
from gkeml_sdk.spec.job import TrainingJob

__version__ = "0.1.0"

__all__ = [
    "Accelerator",
    "ClusterError",
    "ConfigError",
    "CostEstimate",
    "FailureCause",
    "GkemlError",
    "Manifests",
    "PriceBook",
    "Run",
    "RunState",
    "RunStatus",
    "SpecError",
    "TpuSlice",
    "TrainingJob",
    "Transition",
    "__version__",
]
