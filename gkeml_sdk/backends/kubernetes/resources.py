"""REST paths of the kinds the SDK reads and writes (group, version, plural, scope)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

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
    Resource("v1", "Namespace", "namespaces", namespaced=False),
    Resource("v1", "Pod", "pods"),
    Resource("v1", "ConfigMap", "configmaps"),
    Resource("v1", "Service", "services"),
    Resource("v1", "Secret", "secrets"),
    Resource("v1", "Event", "events"),
    Resource("v1", "PodTemplate", "podtemplates"),
    Resource("v1", "ResourceQuota", "resourcequotas"),
    Resource("v1", "LimitRange", "limitranges"),
    Resource("v1", "ServiceAccount", "serviceaccounts"),
    Resource("coordination.k8s.io/v1", "Lease", "leases"),
    Resource("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies"),
    Resource("rbac.authorization.k8s.io/v1", "Role", "roles"),
    Resource("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"),
    Resource("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", namespaced=False),
    Resource("kueue.x-k8s.io/v1beta2", "Cohort", "cohorts", namespaced=False),
    Resource("v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
    Resource("v1", "PersistentVolume", "persistentvolumes", namespaced=False),
    Resource("storage.k8s.io/v1", "StorageClass", "storageclasses", namespaced=False),
    Resource("datalayer.gke.io/v1", "GCPDataSource", "gcpdatasources"),
    Resource("batch/v1", "Job", "jobs"),
    Resource("apps/v1", "Deployment", "deployments"),
    Resource("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers"),
    Resource("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets"),
    Resource("jobset.x-k8s.io/v1alpha2", "JobSet", "jobsets"),
    Resource("kueue.x-k8s.io/v1beta2", "Workload", "workloads"),
    Resource("kueue.x-k8s.io/v1beta2", "LocalQueue", "localqueues"),
    Resource("kueue.x-k8s.io/v1beta2", "ClusterQueue", "clusterqueues", namespaced=False),
    Resource("kueue.x-k8s.io/v1beta2", "ResourceFlavor", "resourceflavors", namespaced=False),
    Resource(
        "kueue.x-k8s.io/v1beta2",
        "WorkloadPriorityClass",
        "workloadpriorityclasses",
        namespaced=False,
    ),
    Resource("kueue.x-k8s.io/v1beta2", "AdmissionCheck", "admissionchecks", namespaced=False),
    Resource(
        "kueue.x-k8s.io/v1beta2",
        "ProvisioningRequestConfig",
        "provisioningrequestconfigs",
        namespaced=False,
    ),
    Resource("kueue.x-k8s.io/v1beta2", "Topology", "topologies", namespaced=False),
    Resource("autoscaling.x-k8s.io/v1", "ProvisioningRequest", "provisioningrequests"),
    Resource("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "leaderworkersets"),
    Resource("monitoring.googleapis.com/v1", "PodMonitoring", "podmonitorings"),
    Resource("inference.networking.k8s.io/v1", "InferencePool", "inferencepools"),
    Resource("gateway.networking.k8s.io/v1", "HTTPRoute", "httproutes"),
    Resource("networking.istio.io/v1", "VirtualService", "virtualservices"),
    Resource("networking.istio.io/v1", "DestinationRule", "destinationrules"),
    Resource("networking.gke.io/v1", "HealthCheckPolicy", "healthcheckpolicies"),
    Resource("networking.gke.io/v1", "GCPBackendPolicy", "gcpbackendpolicies"),
    Resource("resource.k8s.io/v1", "ResourceClaimTemplate", "resourceclaimtemplates"),
    Resource("resource.nvidia.com/v1beta1", "ComputeDomain", "computedomains"),
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
