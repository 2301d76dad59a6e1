"""Cloud TPU generations on GKE: labels, machine types, valid topologies, host arithmetic
(https://cloud.google.com/kubernetes-engine/docs/concepts/tpus).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gkeml_sdk.core import environment as c
from gkeml_sdk.core.lookup import resolve

if TYPE_CHECKING:
    from gkeml_sdk.core.environment import WorkerValue

TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
TPU_RESOURCE = "google.com/tpu"
TPU_TAINT_KEY = "google.com/tpu"
TPU_PORTS = (8471, 8431)  # libtpu VM-to-VM traffic, TPU runtime metrics
# Multislice traffic between slices crosses the data-centre network (DCN): XPK runs slice
# pods on the node's network (hostNetwork with dnsPolicy ClusterFirstWithHostNet, so pod DNS
# still resolves) and opens 8080 for megascale beside 8471 (xpk workload.py, docker_container.py).
DCN_PORT = ("megascale", 8080)
MULTISLICE_EXCLUSIVE_TOPOLOGY = "cloud.google.com/gke-nodepool"
# What the TPU runtime reads on each VM: one slice lists its hosts; several slices
# (multislice) find each other through megascale.
SINGLE_SLICE_ENV: tuple[tuple[str, WorkerValue], ...] = (
    (c.TPU_WORKER_ID, "rank"),
    (c.TPU_WORKER_HOSTNAMES, "slice_hosts"),
)
MULTISLICE_ENV: tuple[tuple[str, WorkerValue], ...] = (
    (c.TPU_WORKER_ID, "rank"),
    (c.MEGASCALE_COORDINATOR_ADDRESS, "coordinator"),
    (c.MEGASCALE_NUM_SLICES, "slices"),
    (c.MEGASCALE_SLICE_ID, "slice_index"),
)


@dataclass(frozen=True, slots=True)
class TpuGeneration:
    """One TPU generation.

    `single_host` maps each single-VM topology to its machine type; multi-host slices use
    `multi_host_machine` (4 chips per VM).

    Example:
        >>> g = tpu("v5e"); g.label, g.hosts("4x4"), g.machine_type("4x4")
        ('tpu-v5-lite-podslice', 4, 'ct5lp-hightpu-4t')
    """

    key: str
    label: str
    display: str
    dims: int
    single_host: tuple[tuple[str, str, int], ...]  # (topology, machine type, chips per VM)
    multi_host_machine: str
    multi_host_fixed: tuple[str, ...]  # small multi-host shapes allowed besides the rule
    max_chips: int
    hbm_gb: int
    aliases: tuple[str, ...] = ()
    uses_workload_policy: bool = False  # TPU7x multi-host: placement policy, not tpu_topology
    # Flex-start node pools (GKE "About flex-start provisioning"): v5e, v5p and v6e; alone it
    # gives single-host slices, multi-host ones need it with queued provisioning.
    flex_start: bool = False
    # How pods reach and use it; every generation so far shares these.
    resource: str = TPU_RESOURCE
    selector_label: str = TPU_ACCELERATOR_LABEL
    topology_label: str = TPU_TOPOLOGY_LABEL
    taint_key: str = TPU_TAINT_KEY
    # Each multi-host slice is one node pool: a Job whose pods straddled two would span two.
    slice_pool_label: str = MULTISLICE_EXCLUSIVE_TOPOLOGY
    ports: tuple[tuple[str, int], ...] = (("tpu-ici", TPU_PORTS[0]), ("tpu-metrics", TPU_PORTS[1]))
    dcn_port: tuple[str, int] = DCN_PORT  # multislice only
    single_slice_env: tuple[tuple[str, WorkerValue], ...] = SINGLE_SLICE_ENV
    multislice_env: tuple[tuple[str, WorkerValue], ...] = MULTISLICE_ENV
    CHIPS_PER_MULTI_HOST_VM = 4

    def topologies(self, limit_chips: int | None = None) -> list[str]:
        """Every valid topology up to `limit_chips` (default: the generation's maximum)."""
        cap = limit_chips or self.max_chips
        found = [t for t, _, _ in self.single_host] + list(self.multi_host_fixed)
        if self.dims == 3:
            # Beyond the small shapes, every dimension is a multiple of 4, sorted A<=B<=C.
            for a in range(4, 65, 4):
                for b in range(a, 65, 4):
                    for c in range(b, 65, 4):
                        if a * b * c <= cap:
                            found.append(f"{a}x{b}x{c}")
        return sorted(dict.fromkeys(found), key=lambda t: (chips_of(t), t))

    def is_valid(self, topology: str) -> bool:
        """True when GKE offers this topology for this generation."""
        dims = _parse(topology)
        if dims is None or len(dims) != self.dims:
            return False
        if topology in self._single or topology in self.multi_host_fixed:
            return True
        if self.dims == 3:
            return (
                all(d % 4 == 0 for d in dims)
                and list(dims) == sorted(dims)
                and math.prod(dims) <= self.max_chips
            )
        return False

    @property
    def _single(self) -> dict[str, tuple[str, int]]:
        return {t: (m, c) for t, m, c in self.single_host}

    def chips_per_host(self, topology: str) -> int:
        """Chips on each VM of a slice with this topology."""
        single = self._single.get(topology)
        return single[1] if single else self.CHIPS_PER_MULTI_HOST_VM

    def machine_type(self, topology: str) -> str:
        """The node machine type for this topology."""
        single = self._single.get(topology)
        return single[0] if single else self.multi_host_machine

    def hosts(self, topology: str) -> int:
        """VMs (= pods) in one slice."""
        return chips_of(topology) // self.chips_per_host(topology)


def chips_of(topology: str) -> int:
    """Chips in a topology: the product of its dimensions.

    Example:
        >>> chips_of("4x4x8")
        128
    """
    dims = _parse(topology)
    return math.prod(dims) if dims else 0


@functools.lru_cache(maxsize=512)  # specs read a slice's topology many times while compiling
def canonical_topology(topology: str) -> str | None:
    """The node-label spelling of a topology (`4X4X4`, `04x4x4`, `４x4` read as digits), or
    None when it is not sides of positive integers. Only this form may reach a node selector:
    the label GKE puts on nodes is lower-case ASCII without leading zeros.

    Example:
        >>> canonical_topology(" 04X4x4 "), canonical_topology("4x-4")
        ('4x4x4', None)
    """
    parts = topology.strip().lower().split("x")
    # isdecimal() is exactly what int() accepts; 5 digits bound every real slice side.
    if not all(p.isdecimal() and len(p) <= _MAX_SIDE_DIGITS and int(p) > 0 for p in parts):
        return None
    return "x".join(str(int(p)) for p in parts)


_MAX_SIDE_DIGITS = 5


def _parse(topology: str) -> tuple[int, ...] | None:
    canonical = canonical_topology(topology)
    if canonical is None or canonical != topology:
        return None
    return tuple(int(p) for p in canonical.split("x"))


_SMALL_3D = ("2x2x2", "2x2x4", "2x4x4")

TPUS: tuple[TpuGeneration, ...] = (
    TpuGeneration(
        "v4",
        "tpu-v4-podslice",
        "TPU v4",
        3,
        (("2x2x1", "ct4p-hightpu-4t", 4),),
        "ct4p-hightpu-4t",
        _SMALL_3D,
        4096,
        32,
    ),
    TpuGeneration(
        "v5e",
        "tpu-v5-lite-podslice",
        "TPU v5e",
        2,
        (
            ("1x1", "ct5lp-hightpu-1t", 1),
            ("2x2", "ct5lp-hightpu-4t", 4),
            ("2x4", "ct5lp-hightpu-8t", 8),
        ),
        "ct5lp-hightpu-4t",
        ("4x4", "4x8", "8x8", "8x16", "16x16"),
        256,
        16,
        aliases=("v5litepod", "v5-lite"),
        flex_start=True,
    ),
    TpuGeneration(
        "v5p",
        "tpu-v5p-slice",
        "TPU v5p",
        3,
        (("2x2x1", "ct5p-hightpu-4t", 4),),
        "ct5p-hightpu-4t",
        _SMALL_3D,
        8960,
        95,
        flex_start=True,
    ),
    TpuGeneration(
        "v6e",
        "tpu-v6e-slice",
        "TPU v6e (Trillium)",
        2,
        (
            ("1x1", "ct6e-standard-1t", 1),
            ("2x2", "ct6e-standard-4t", 4),
            ("2x4", "ct6e-standard-8t", 8),
        ),
        "ct6e-standard-4t",
        ("4x4", "4x8", "8x8", "8x16", "16x16"),
        256,
        32,
        aliases=("trillium",),
        flex_start=True,
    ),
    TpuGeneration(
        "tpu7x",
        "tpu7x",
        "TPU7x (Ironwood)",
        3,
        (("1x1x1", "tpu7x-standard-1t", 1), ("2x2x1", "tpu7x-standard-4t", 4)),
        "tpu7x-standard-4t",
        _SMALL_3D,
        9216,
        192,
        aliases=("ironwood", "v7x"),
        uses_workload_policy=True,
    ),
)

_BY_NAME = {name: row for row in TPUS for name in (row.key, row.label, *row.aliases)}


def tpu(name: str) -> TpuGeneration:
    """The TPU generation for a short name, alias ("trillium") or node label value.

    Example:
        >>> tpu("trillium").key
        'v6e'
    """
    # Exact names (every row's own key, as specs store it) skip normalising and the name list.
    return _BY_NAME.get(name) or resolve("TPU generation", name, _BY_NAME, tpu_names())


def tpu_names() -> list[str]:
    """Canonical names of every TPU generation."""
    return [row.key for row in TPUS]
