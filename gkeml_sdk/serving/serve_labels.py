"""Label keys and selectors every serving object agrees on (Service, PodMonitoring, PDB,
InferencePool, HPA target), so that they all select the same pods."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.scheduling.kueue import QUEUE_LABEL
from gkeml_sdk.serving.sizing import Fit

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel

SERVE_LABEL = "gkeml.dev/serve"
ROLE_LABEL = "gkeml.dev/role"  # leader / worker in a LeaderWorkerSet group
ENGINE_TYPE_LABEL = "inference.networking.k8s.io/engine-type"  # read by the endpoint picker
LWS_GROUP_KEY = "leaderworkerset.sigs.k8s.io/group-key"


def all_pods(svc: ServeModel) -> dict[str, str]:
    """Selects every pod of the service (leaders and workers).

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> all_pods(ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                     accelerator=Accelerator("l4")))
        {'gkeml.dev/serve': 'qa'}
    """
    return {SERVE_LABEL: svc.name}


def serving_pods(svc: ServeModel, fit: Fit) -> dict[str, str]:
    """Selects the pods that answer HTTP: all of them, or the group leaders when multi-host.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="big", model="meta-llama/Llama-3.1-405B-Instruct",
        ...                  accelerator=Accelerator("h100"), hf_token_secret="hf")
        >>> serving_pods(svc, svc.fit)
        {'gkeml.dev/serve': 'big', 'gkeml.dev/role': 'leader'}
    """
    if fit.multi_host:
        return {**all_pods(svc), ROLE_LABEL: "leader"}
    return all_pods(svc)


def metadata(svc: ServeModel, *, main: bool = False) -> dict[str, object]:
    """`metadata` of a serving object; the Deployment/LWS (`main`) carries the Kueue queue.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                  accelerator=Accelerator("l4"), queue="team-a")
        >>> metadata(svc, main=True)["labels"]["kueue.x-k8s.io/queue-name"]
        'team-a'
    """
    labels = {**svc.labels, **sdk_labels(), **all_pods(svc)}
    if main and svc.queue:
        labels[QUEUE_LABEL] = svc.queue
    return {"name": svc.name, "namespace": svc.namespace, "labels": labels}
