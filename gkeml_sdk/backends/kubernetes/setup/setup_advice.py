"""What to run when a job's Kueue queue is missing or cannot provision it: the `gkeml setup`
commands and the ClusterSetup file that would create the queue."""

from __future__ import annotations

from gkeml_sdk.errors import SpecError
from gkeml_sdk.setup.capacity_model import Capacity
from gkeml_sdk.setup.model import ClusterSetup, Team
from gkeml_sdk.training.model import TrainingJob


def setup_advice(job: TrainingJob) -> str:
    """The exact `gkeml setup` commands, with a setup file that gives `job` its queue.

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> print(setup_advice(TrainingJob(name="a", command=["x"], queue="team-a-queued",
        ...       accelerator=Accelerator("l4"), provisioning="queued", namespace="ml")))
        ... # doctest: +ELLIPSIS
        run `gkeml setup plan setup.yaml`, then `gkeml setup apply setup.yaml`, with setup.yaml:
        capacity:
        - accelerator:
            model: l4
          provisioning:
          - queued
          name: l4
        teams:
        - name: team-a
        ...
    """
    provisioning = "spot" if job.spot else job.provisioning
    suffix = "" if provisioning == "standard" else f"-{provisioning}"
    team = job.queue.removesuffix(suffix) if suffix else job.queue
    hardware = job.accelerator
    if hardware is None:
        return "declare it in a ClusterSetup and run `gkeml setup apply FILE`"
    try:
        capacity = Capacity(accelerator=hardware, provisioning=[provisioning])
        units = sum(hardware.resources().values()) * job.nodes
        member = Team(name=team, namespaces=[job.namespace], quota={capacity.name: units})
        setup = ClusterSetup(capacity=[capacity], teams=[member])
    except SpecError:  # a queue name no team could have: say so without a file
        return "declare it in a ClusterSetup and run `gkeml setup apply FILE`"
    advice = (
        "run `gkeml setup plan setup.yaml`, then `gkeml setup apply setup.yaml`, with "
        f"setup.yaml:\n{setup.to_yaml()}"
    )
    queue = member.queue(provisioning)
    if queue != job.queue:
        advice += f"and submit with queue={queue!r} (ClusterSetup's name for it)"
    return advice
