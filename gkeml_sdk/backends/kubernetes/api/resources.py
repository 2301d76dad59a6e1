"""REST paths of the kinds the SDK reads and writes (group, version, plural, scope)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from gkeml_sdk.core import kinds
from gkeml_sdk.errors import ConfigError


@dataclass(frozen=True)
class Resource:
    """One API resource.

    Example:
        >>> resource("jobset.x-k8s.io/v1alpha2", "JobSet").path("ml", "a")
        '/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets/a'
    """

    api_version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def group(self) -> str:
        """API group ('' for core)."""
        return self.api_version.rpartition("/")[0]

    def path(self, namespace: str | None = None, name: str | None = None, sub: str = "") -> str:
        """The collection or object URL path."""
        root = f"/api/{self.api_version}" if not self.group else f"/apis/{self.api_version}"
        if self.namespaced and namespace:
            root += f"/namespaces/{quote(namespace)}"
        root += f"/{self.plural}"
        if name:
            root += f"/{quote(name)}"
        if sub:
            root += f"/{sub}"
        return root


_KNOWN = [
    Resource(kinds.CORE, "Namespace", "namespaces", namespaced=False),
    Resource(kinds.CORE, "Pod", "pods"),
    Resource(kinds.CORE, "ConfigMap", "configmaps"),
    Resource(kinds.CORE, "Service", "services"),
    Resource(kinds.CORE, "Secret", "secrets"),
    Resource(kinds.CORE, "Event", "events"),
    Resource(kinds.CORE, "PodTemplate", "podtemplates"),
    Resource(kinds.CORE, "ResourceQuota", "resourcequotas"),
    Resource(kinds.CORE, "LimitRange", "limitranges"),
    Resource(kinds.CORE, "ServiceAccount", "serviceaccounts"),
    Resource(kinds.COORDINATION, "Lease", "leases"),
    Resource(kinds.NETWORKING, "NetworkPolicy", "networkpolicies"),
    Resource(kinds.RBAC, "Role", "roles"),
    Resource(kinds.RBAC, "RoleBinding", "rolebindings"),
    Resource(kinds.RBAC, "ClusterRole", "clusterroles", namespaced=False),
    Resource(kinds.RBAC, "ClusterRoleBinding", "clusterrolebindings", namespaced=False),
    Resource(kinds.SCHEDULING, "PriorityClass", "priorityclasses", namespaced=False),
    Resource(kinds.KUEUE, "Cohort", "cohorts", namespaced=False),
    Resource(kinds.CORE, "PersistentVolumeClaim", "persistentvolumeclaims"),
    Resource(kinds.CORE, "PersistentVolume", "persistentvolumes", namespaced=False),
    Resource(kinds.STORAGE, "StorageClass", "storageclasses", namespaced=False),
    Resource(kinds.GKE_DATALAYER, "GCPDataSource", "gcpdatasources"),
    Resource(kinds.BATCH, "Job", "jobs"),
    Resource(kinds.APPS, "Deployment", "deployments"),
    Resource(kinds.APPS, "DaemonSet", "daemonsets"),
    Resource(kinds.AUTOSCALING, "HorizontalPodAutoscaler", "horizontalpodautoscalers"),
    Resource(kinds.KEDA, "ScaledObject", "scaledobjects"),
    Resource(kinds.POLICY, "PodDisruptionBudget", "poddisruptionbudgets"),
    Resource(kinds.JOBSET, "JobSet", "jobsets"),
    Resource(kinds.KUEUE, "Workload", "workloads"),
    Resource(kinds.KUEUE, "LocalQueue", "localqueues"),
    Resource(kinds.KUEUE, "ClusterQueue", "clusterqueues", namespaced=False),
    Resource(kinds.KUEUE, "ResourceFlavor", "resourceflavors", namespaced=False),
    Resource(
        kinds.KUEUE,
        "WorkloadPriorityClass",
        "workloadpriorityclasses",
        namespaced=False,
    ),
    Resource(kinds.KUEUE, "AdmissionCheck", "admissionchecks", namespaced=False),
    Resource(kinds.KUEUE, "MultiKueueCluster", "multikueueclusters", namespaced=False),
    Resource(kinds.KUEUE, "MultiKueueConfig", "multikueueconfigs", namespaced=False),
    Resource(
        kinds.KUEUE,
        "ProvisioningRequestConfig",
        "provisioningrequestconfigs",
        namespaced=False,
    ),
    Resource(kinds.KUEUE, "Topology", "topologies", namespaced=False),
    Resource(kinds.PROVISIONING_REQUEST, "ProvisioningRequest", "provisioningrequests"),
    Resource(kinds.LWS, "LeaderWorkerSet", "leaderworkersets"),
    Resource(kinds.MANAGED_PROMETHEUS, "PodMonitoring", "podmonitorings"),
    Resource(kinds.INFERENCE, "InferencePool", "inferencepools"),
    Resource(kinds.GATEWAY, "HTTPRoute", "httproutes"),
    Resource(kinds.ISTIO_NETWORKING, "VirtualService", "virtualservices"),
    Resource(kinds.ISTIO_NETWORKING, "DestinationRule", "destinationrules"),
    Resource(kinds.GKE_NETWORKING, "HealthCheckPolicy", "healthcheckpolicies"),
    Resource(kinds.GKE_NETWORKING, "GCPBackendPolicy", "gcpbackendpolicies"),
    # GPUDirect NICs: GKE's multi-network objects (cluster-scoped).
    Resource(kinds.GKE_NETWORKING, "GKENetworkParamSet", "gkenetworkparamsets", namespaced=False),
    Resource(kinds.GKE_NETWORKING, "Network", "networks", namespaced=False),
    Resource(kinds.RESOURCE, "ResourceClaimTemplate", "resourceclaimtemplates"),
    Resource(kinds.NVIDIA_RESOURCE, "ComputeDomain", "computedomains"),
]
_BY_KIND = {(r.api_version, r.kind): r for r in _KNOWN}


def resource(api_version: str, kind: str) -> Resource:
    """The resource for an object's apiVersion and kind."""
    found = _BY_KIND.get((api_version, kind))
    if found is None:
        raise ConfigError(f"gkeml does not know the REST path of {api_version} {kind}")
    return found


def resource_of(obj: dict[str, object]) -> Resource:
    """The resource of an object dict."""
    return resource(str(obj["apiVersion"]), str(obj["kind"]))
