"""The Kubernetes objects some volumes need besides the pod: a Hyperdisk ML StorageClass and
claim (with the GKE Volume Populator `GCPDataSource` that fills it from a bucket), a static
Parallelstore PersistentVolume and claim, and the prerequisites a user must set up (notes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.storage import catalog as storage
from gkeml_sdk.storage.shared_objects import shared_metadata

if TYPE_CHECKING:
    from gkeml_sdk.storage.disks import HyperdiskML, Parallelstore
    from gkeml_sdk.storage.volume_base import VolumeBase

ROLES = {True: "roles/storage.objectViewer", False: "roles/storage.objectUser"}


def volume_objects(volumes: Sequence[VolumeBase], namespace: str, sa: str | None) -> list[Obj]:
    """Objects to create before the pods that mount `volumes` (cluster-scoped ones first).
    They are shared (`storage.shared_objects`): created when missing, never owned by a run.

    Example:
        >>> from gkeml_sdk.storage.disks import HyperdiskML
        >>> objs = volume_objects([HyperdiskML(bucket="w", path="llama", size="300Gi")],
        ...                       "ml", "loader")
        >>> [o["kind"] for o in objs]
        ['StorageClass', 'GCPDataSource', 'PersistentVolumeClaim']
    """
    if not volumes:
        return []
    from gkeml_sdk.storage.disks import HyperdiskML, Parallelstore  # loaded once a spec has volumes

    cluster: list[Obj] = []
    namespaced: list[Obj] = []
    for volume in volumes:
        if isinstance(volume, HyperdiskML) and volume.pvc is None:
            storage_class = _hyperdisk_class(volume)
            if storage_class not in cluster:
                cluster.append(storage_class)
            if volume.bucket is not None:
                namespaced.append(_data_source(volume, namespace, sa or "default"))
            namespaced.append(_hyperdisk_claim(volume, namespace, storage_class))
        elif isinstance(volume, Parallelstore) and volume.pvc is None:
            cluster.append(_parallelstore_pv(volume, namespace))
            namespaced.append(_parallelstore_claim(volume, namespace))
    return cluster + namespaced


def volume_notes(volumes: Sequence[VolumeBase], namespace: str, sa: str | None) -> list[str]:
    """What the cluster and project need before these volumes mount.

    Example:
        >>> from gkeml_sdk.storage.volumes import GcsFuse
        >>> volume_notes([GcsFuse("data", read_only=True)], "ml", "trainer")[0][:60]
        'Cloud Storage FUSE: grant roles/storage.objectViewer on gs:/'
    """
    if not volumes:
        return []
    from gkeml_sdk.storage.disks import HyperdiskML, Parallelstore  # loaded once a spec has volumes
    from gkeml_sdk.storage.volumes import GcsFuse

    ksa = sa or "default"
    member = (
        "principal://iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/"
        f"workloadIdentityPools/PROJECT_ID.svc.id.goog/subject/ns/{namespace}/sa/{ksa}"
    )
    notes = []
    for volume in volumes:
        if isinstance(volume, GcsFuse):
            role = ROLES[volume.read_only]
            notes.append(
                f"Cloud Storage FUSE: grant {role} on gs://{volume.bucket} to the Kubernetes "
                f"service account {namespace}/{ksa} (Workload Identity Federation for GKE; the "
                "cluster needs the GcsFuseCsiDriver add-on): gcloud storage buckets "
                f"add-iam-policy-binding gs://{volume.bucket} --member={member} --role={role}"
            )
        elif isinstance(volume, HyperdiskML) and volume.bucket is not None:
            notes.append(
                f"GKE Volume Populator fills claim {volume.claim!r} from {volume.source_uri}/ "
                f"(GKE {storage.POPULATOR_MIN_GKE} or later): grant roles/storage.objectViewer "
                f"on gs://{volume.bucket} to {namespace}/{ksa} ({member}), and provide the "
                f"ComputeClass {storage.POPULATOR_COMPUTE_CLASS!r} for the transfer Job; "
                "delete the claim before its GCPDataSource"
            )
        elif isinstance(volume, Parallelstore):
            notes.append(
                "Parallelstore: the cluster needs the ParallelstoreCsiDriver add-on and a VPC "
                "peered with the instance"
            )
    return list(dict.fromkeys(notes))


def _hyperdisk_class(volume: HyperdiskML) -> Obj:
    return {
        "apiVersion": kinds.STORAGE,
        "kind": "StorageClass",
        # Named by its parameters: they cannot change once created, and equal volumes share it.
        "metadata": shared_metadata(f"gkeml-hyperdisk-ml-{volume.throughput_mib}mi"),
        "provisioner": storage.PD_PROVISIONER,
        "parameters": {
            "type": storage.HYPERDISK_ML_TYPE,
            "provisioned-throughput-on-create": f"{volume.throughput_mib}Mi",
        },
        "allowVolumeExpansion": False,
        "reclaimPolicy": "Delete",
        # The disk is created in the zone of the first pod that uses it.
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def _data_source(volume: HyperdiskML, namespace: str, ksa: str) -> Obj:
    path = volume.path.strip("/")
    uri = f"gs://{volume.bucket}/" + (f"{path}/" if path else "")  # a folder ends with '/'
    return {
        "apiVersion": storage.POPULATOR_API,
        "kind": storage.POPULATOR_KIND,
        "metadata": shared_metadata(volume.claim, namespace),
        "spec": {"cloudStorage": {"serviceAccountName": ksa, "uri": uri}},
    }


def _hyperdisk_claim(volume: HyperdiskML, namespace: str, storage_class: Obj) -> Obj:
    spec: Obj = {
        "accessModes": ["ReadOnlyMany" if volume.read_only_many else "ReadWriteOnce"],
        "storageClassName": storage_class["metadata"]["name"],
        "resources": {"requests": {"storage": volume.size}},
    }
    if volume.bucket is not None:
        spec["dataSourceRef"] = {
            "apiGroup": storage.POPULATOR_GROUP,
            "kind": storage.POPULATOR_KIND,
            "name": volume.claim,
        }
    else:
        spec["dataSource"] = {
            "apiGroup": storage.SNAPSHOT_GROUP,
            "kind": "VolumeSnapshot",
            "name": volume.snapshot,
        }
    return _claim_object(volume.claim, namespace, spec)


def _parallelstore_pv(volume: Parallelstore, namespace: str) -> Obj:
    attributes = {"accessPoints": ",".join(volume.access_points)}
    if volume.mount_locality != "pod":
        attributes["mountLocality"] = volume.mount_locality
    return {
        "apiVersion": kinds.CORE,
        "kind": "PersistentVolume",
        # Cluster-scoped: the namespace keeps two namespaces' volumes apart.
        "metadata": shared_metadata(f"{namespace}-{volume.claim}"),
        "spec": {
            "storageClassName": "",
            "capacity": {"storage": volume.capacity},
            "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "volumeMode": "Filesystem",
            "claimRef": {"namespace": namespace, "name": volume.claim},
            "csi": {
                "driver": storage.PARALLELSTORE_DRIVER,
                "volumeHandle": volume.volume_handle,
                "volumeAttributes": attributes,
            },
        },
    }


def _parallelstore_claim(volume: Parallelstore, namespace: str) -> Obj:
    spec: Obj = {
        "accessModes": ["ReadWriteMany"],
        "storageClassName": "",
        "volumeName": f"{namespace}-{volume.claim}",
        "resources": {"requests": {"storage": volume.capacity}},
    }
    return _claim_object(volume.claim, namespace, spec)


def _claim_object(name: str, namespace: str, spec: Obj) -> Obj:
    return {
        "apiVersion": kinds.CORE,
        "kind": "PersistentVolumeClaim",
        "metadata": shared_metadata(name, namespace),
        "spec": spec,
    }
