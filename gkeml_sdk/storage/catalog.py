"""Storage drivers for data and weights on GKE: CSI driver names, the Cloud Storage FUSE pod
annotations, Hyperdisk ML and GKE Volume Populator objects, and the read throughputs the
serving plan sizes start-up with.

Sources: https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/cloud-storage-fuse-csi-driver,
https://cloud.google.com/kubernetes-engine/docs/reference/cloud-storage-fuse-csi-driver/volume-attr,
https://cloud.google.com/kubernetes-engine/docs/concepts/about-volume-populator,
https://cloud.google.com/compute/docs/disks/hyperdisks, https://cloud.google.com/parallelstore/docs.
"""

from __future__ import annotations

import re

from gkeml_sdk.core import kinds

# Cloud Storage bucket names: https://cloud.google.com/storage/docs/buckets#naming
BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]\Z")
BUCKET_RULE = "bucket names are 3-63 lower-case letters, digits, '-', '_' and '.'"
GCSFUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
GCSFUSE_ANNOTATION = "gke-gcsfuse/volumes"  # "true" makes GKE inject the FUSE sidecar
GCSFUSE_SIDECAR_PREFIX = "gke-gcsfuse/"  # + cpu-limit, memory-limit, ephemeral-storage-limit...
SIDECAR_RESOURCES = ("cpu", "memory", "ephemeral-storage")
# A pod volume of this name holds the file cache instead of the sidecar's ephemeral storage.
GCSFUSE_CACHE_VOLUME = "gke-gcsfuse-cache"
GCSFUSE_RESERVED_VOLUMES = frozenset(
    {GCSFUSE_CACHE_VOLUME, "gke-gcsfuse-tmp", "gke-gcsfuse-buffer"}
)

PD_PROVISIONER = "pd.csi.storage.gke.io"
HYPERDISK_ML_TYPE = "hyperdisk-ml"
HYPERDISK_ML_DEFAULT_THROUGHPUT_MIB = 2400  # GKE's Hyperdisk ML samples provision this
HYPERDISK_ML_MIN_GI = 5  # a Hyperdisk ML volume must be larger than 4 GiB

PARALLELSTORE_DRIVER = "parallelstore.csi.storage.gke.io"
PARALLELSTORE_CAPACITIES = ("12Ti", "16Ti", "20Ti")  # what a static PV may declare

POPULATOR_API = kinds.GKE_DATALAYER
POPULATOR_GROUP = "datalayer.gke.io"
POPULATOR_KIND = "GCPDataSource"
POPULATOR_COMPUTE_CLASS = "gcs-to-hdml-compute-class"
POPULATOR_MIN_GKE = "1.33.2-gke.4780000"

SNAPSHOT_GROUP = "snapshot.storage.k8s.io"

# Read throughput a serving replica loads weights at, in GB/s: planning figures, not
# guarantees. The Hub figure is a single download per pod; a Cloud Storage FUSE mount reads
# one stream per file unless parallel downloads fill the file cache with several workers
# (Google cites up to 9x faster model loads); Hyperdisk ML reads at the volume's provisioned
# throughput.
HUB_GB_PER_SECOND = 0.25
GCSFUSE_GB_PER_SECOND = 0.25
GCSFUSE_PARALLEL_GB_PER_SECOND = 1.2
MIB = 2**20
