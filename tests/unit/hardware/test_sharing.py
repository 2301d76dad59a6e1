"""Shared GPUs: MPS clients get their share as limits, and both strategies say what they risk."""

from __future__ import annotations

import re

from gkeml_sdk import Accelerator, TrainingJob
from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.hardware.sharing import mps_env


def _job(acc: Accelerator, **kw: object) -> TrainingJob:
    return TrainingJob(name="ft", image="i", command=["x"], accelerator=acc, stateless=True, **kw)


def _env(job: TrainingJob) -> dict[str, str]:
    container = job.compile().main["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", "") for e in container["env"]}


def test_mps_containers_are_limited_to_their_share_of_threads_and_memory() -> None:
    env = _env(_job(Accelerator("h100", sharing="mps", clients_per_gpu=8)))
    assert env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "12"
    assert env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=10240MB"
    # Several shares on a one-GPU node: that many shares of it.
    two = _env(_job(Accelerator("l4", sharing="mps", clients_per_gpu=4, count=2)))
    assert two["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "50"
    assert two["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=12288MB"


def test_the_users_own_mps_limits_win() -> None:
    acc = Accelerator("l4", sharing="mps", clients_per_gpu=4)
    env = _env(_job(acc, env={"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "40"}))
    assert env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "40"
    assert "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT" in env


def test_time_sharing_and_mps_jobs_are_told_what_sharing_costs() -> None:
    shared = _job(Accelerator("l4", sharing="time-sharing", clients_per_gpu=4)).compile().notes
    assert any("no memory isolation" in n and "switches contexts" in n and "6 GB" in n
               for n in shared)  # fmt: skip
    assert "CUDA_MPS" not in str(_env(_job(Accelerator("l4", sharing="time-sharing",
                                                       clients_per_gpu=4))))  # fmt: skip
    mps = _job(Accelerator("l4", sharing="mps", clients_per_gpu=4)).compile().notes
    assert any("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=6144MB" in n for n in mps)
    whole = _job(Accelerator("l4")).compile().notes
    assert not any("sharing" in n or "MPS" in n for n in whole)


def test_mps_limits_follow_nvidias_grammar_for_every_gpu_and_client_count() -> None:
    # NVIDIA MPS (Environment Variables, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, which GKE's MPS page
    # links for the limit): "<device ordinal>=<limit>" pairs, e.g. "0=1G,1=512MB"; the pod sees
    # its one shared GPU as device 0. The thread share is a whole percentage from 1 to 100.
    for row in GPUS:
        for clients in (2, 7, 48):
            env = mps_env(Accelerator(row.key, sharing="mps", clients_per_gpu=clients))
            limit = re.fullmatch(r"0=([1-9][0-9]*)MB", env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"])
            assert limit is not None, (row.key, clients, env)
            assert int(limit.group(1)) == row.memory_gb * 1024 // clients
            assert 1 <= int(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"]) <= 100 // clients
