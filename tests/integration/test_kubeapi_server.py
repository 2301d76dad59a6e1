"""The fake kube-apiserver (tests/kubeapi) exercised through the official kubernetes client."""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import urllib3
from kubernetes import client, config, dynamic, watch
from kubernetes.watch.watch import iter_resp_lines

from tests.kubeapi import KubeAPIServer, shared_crds_dir

pytest_plugins = ["tests.kubeapi.fixtures"]

JS = ("jobset.x-k8s.io", "v1alpha2")
KQ = "kueue.x-k8s.io"


def jobset(name: str, labels: dict[str, str] | None = None, replicas: Any = 1) -> dict[str, Any]:
    pod = {"containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "Never"}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "w",
                    "replicas": replicas,
                    "template": {"spec": {"template": {"spec": pod}}},
                }
            ]
        },
    }


def configmap(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels or {}},
        "data": {"k": "v"},
    }


def raw(
    server: KubeAPIServer,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    data = None if body is None else json.dumps(body).encode()
    conn.request(method, path, body=data, headers=headers or {"Content-Type": "application/json"})
    resp = conn.getresponse()
    out = resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    conn.close()
    return out


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # handed to the test thread
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


# ---- discovery ---------------------------------------------------------------------------


def test_discovery_lists_builtin_and_crd_resources(kube_api: KubeAPIServer, kube_client: Any):
    groups = {g.name: g for g in client.ApisApi(kube_client).get_api_versions().groups}
    assert {"batch", "apps", "autoscaling", "policy", "apiextensions.k8s.io"} <= set(groups)
    assert {
        "jobset.x-k8s.io",
        KQ,
        "leaderworkerset.x-k8s.io",
        "monitoring.googleapis.com",
        "networking.istio.io",
        "inference.networking.k8s.io",
    } <= set(groups)
    assert groups[KQ].preferred_version.version == "v1beta2"
    js = client.CustomObjectsApi(kube_client).get_api_resources(*JS)
    by_name = {r.name: r for r in js.resources}
    assert by_name["jobsets"].namespaced and by_name["jobsets"].kind == "JobSet"
    assert by_name["jobsets/status"].verbs == ["get", "patch", "update"]
    core = {r.name: r for r in client.CoreV1Api(kube_client).get_api_resources().resources}
    assert "pods/log" in core and core["pods"].short_names == ["po"]
    assert client.VersionApi(kube_client).get_code().major == "1"


def test_dynamic_client_discovers_and_creates(kube_api: KubeAPIServer, kube_client: Any):
    dyn = dynamic.DynamicClient(kube_client)
    jobsets = dyn.resources.get(api_version="jobset.x-k8s.io/v1alpha2", kind="JobSet")
    jobsets.create(body=jobset("dyn"), namespace="ml")
    assert jobsets.get(name="dyn", namespace="ml").metadata.name == "dyn"


def test_missing_crds_are_404(kube_api_factory: Callable[..., KubeAPIServer]):
    server = kube_api_factory(exclude_crds=["jobset.x-k8s.io", KQ])
    with server.api_client() as api:
        co = client.CustomObjectsApi(api)
        with pytest.raises(client.ApiException) as err:
            co.list_namespaced_custom_object(*JS, "ml", "jobsets")
        assert err.value.status == 404
        assert "could not find the requested resource" in err.value.body
        names = {g.name for g in client.ApisApi(api).get_api_versions().groups}
        assert "jobset.x-k8s.io" not in names and KQ not in names
        assert "leaderworkerset.x-k8s.io" in names


def test_crd_install_and_uninstall_at_runtime(kube_api_factory: Callable[..., KubeAPIServer]):
    server = kube_api_factory(crds=[KQ])
    crd_file = shared_crds_dir() / "jobset.x-k8s.io_jobsets.yaml"  # type: ignore[operator]
    with server.api_client() as api:
        co = client.CustomObjectsApi(api)
        with pytest.raises(client.ApiException) as err:
            co.create_namespaced_custom_object(*JS, "ml", "jobsets", jobset("x"))
        assert err.value.status == 404
        server.install_crd(crd_file)
        co.create_namespaced_custom_object(*JS, "ml", "jobsets", jobset("x"))
        crd = client.ApiextensionsV1Api(api).read_custom_resource_definition(
            "jobsets.jobset.x-k8s.io"
        )
        assert {c.type for c in crd.status.conditions} == {"Established", "NamesAccepted"}
        server.uninstall_crd("jobsets.jobset.x-k8s.io")
        with pytest.raises(client.ApiException) as err:
            co.list_namespaced_custom_object(*JS, "ml", "jobsets")
        assert err.value.status == 404


# ---- CRUD ----------------------------------------------------------------------------------


def test_crud_namespaced_builtin(kube_api: KubeAPIServer, kube_client: Any):
    core = client.CoreV1Api(kube_client)
    rv0 = kube_api.resource_version
    cm = core.create_namespaced_config_map("ml", configmap("a"))
    assert (
        cm.metadata.uid
        and cm.metadata.creation_timestamp
        and int(cm.metadata.resource_version) > rv0
    )
    with pytest.raises(client.ApiException) as err:
        core.create_namespaced_config_map("ml", configmap("a"))
    assert err.value.status == 409 and json.loads(err.value.body)["reason"] == "AlreadyExists"
    gen = core.create_namespaced_config_map("ml", {"metadata": {"generateName": "g-"}})
    assert gen.metadata.name.startswith("g-") and len(gen.metadata.name) == 7
    cm.data = {"k": "v2"}
    updated = core.replace_namespaced_config_map("a", "ml", cm)
    assert updated.data == {"k": "v2"}
    with pytest.raises(client.ApiException) as err:
        core.replace_namespaced_config_map("a", "ml", cm)  # cm still has the old rv
    assert err.value.status == 409 and json.loads(err.value.body)["reason"] == "Conflict"
    assert [c.metadata.name for c in core.list_namespaced_config_map("ml").items] == [
        "a",
        gen.metadata.name,
    ]
    core.delete_namespaced_config_map("a", "ml")
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_config_map("a", "ml")
    assert err.value.status == 404
    assert json.loads(err.value.body)["message"] == 'configmaps "a" not found'


def test_missing_namespace_is_404(kube_client: Any):
    with pytest.raises(client.ApiException) as err:
        client.CoreV1Api(kube_client).create_namespaced_config_map("nope", configmap("a"))
    assert err.value.status == 404
    assert json.loads(err.value.body)["message"] == 'namespaces "nope" not found'


def test_cluster_scoped_crd_and_versions(kube_client: Any):
    co = client.CustomObjectsApi(kube_client)
    cq = {
        "apiVersion": f"{KQ}/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"namespaceSelector": {}},
    }
    created = co.create_cluster_custom_object(KQ, "v1beta2", "clusterqueues", cq)
    assert "namespace" not in created["metadata"] and created["metadata"]["generation"] == 1
    assert co.get_cluster_custom_object(KQ, "v1beta1", "clusterqueues", "cq")["apiVersion"] == (
        f"{KQ}/v1beta1"
    )
    cq_old = dict(created, metadata={"name": "cq"})  # CRs need metadata.resourceVersion on PUT
    with pytest.raises(client.ApiException) as err:
        co.replace_cluster_custom_object(KQ, "v1beta2", "clusterqueues", "cq", cq_old)
    assert err.value.status == 422


def test_patch_flavours(kube_client: Any):
    co = client.CustomObjectsApi(kube_client)
    co.create_namespaced_custom_object(*JS, "ml", "jobsets", jobset("p"))
    merged = co.patch_namespaced_custom_object(
        *JS, "ml", "jobsets", "p", {"metadata": {"labels": {"x": "1"}}}
    )
    assert merged["metadata"]["labels"] == {"x": "1"}
    # replicatedJobs are immutable (JobSet webhook); ttlSecondsAfterFinished is not
    ops = [{"op": "add", "path": "/spec/ttlSecondsAfterFinished", "value": 3}]
    patched = co.patch_namespaced_custom_object(
        *JS, "ml", "jobsets", "p", ops, _content_type="application/json-patch+json"
    )
    assert patched["spec"]["ttlSecondsAfterFinished"] == 3
    assert patched["metadata"]["generation"] == 2 and merged["metadata"]["generation"] == 1
    with pytest.raises(client.ApiException) as err:  # like kube-apiserver: no SMP for CRs
        co.patch_namespaced_custom_object(
            *JS,
            "ml",
            "jobsets",
            "p",
            {"spec": {}},
            _content_type="application/strategic-merge-patch+json",
        )
    assert err.value.status == 415
    apps = client.AppsV1Api(kube_client)
    dep = {
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]},
            },
        },
    }
    apps.create_namespaced_deployment("ml", dep)
    smp = {"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "2"}]}}}}
    out = apps.patch_namespaced_deployment(
        "d", "ml", smp, _content_type="application/strategic-merge-patch+json"
    )
    assert [(c.name, c.image) for c in out.spec.template.spec.containers] == [
        ("a", "1"),
        ("b", "2"),
    ]


def test_status_subresource(kube_api: KubeAPIServer, kube_client: Any):
    co = client.CustomObjectsApi(kube_client)
    created = co.create_namespaced_custom_object(*JS, "ml", "jobsets", jobset("s"))
    assert "status" not in created
    body = dict(created, status={"restarts": 5})
    updated = co.replace_namespaced_custom_object(*JS, "ml", "jobsets", "s", body)
    assert "status" not in updated  # main resource writes ignore .status
    st = co.patch_namespaced_custom_object_status(
        *JS, "ml", "jobsets", "s", {"status": {"restarts": 2}, "spec": {"suspend": True}}
    )
    assert st["status"] == {"restarts": 2} and "suspend" not in st["spec"]
    assert st["metadata"]["generation"] == 1
    kube_api.store.update_status("jobsets", "ml", "s", {"restarts": 7})
    assert co.get_namespaced_custom_object(*JS, "ml", "jobsets", "s")["status"] == {"restarts": 7}


def test_server_side_apply(kube_api: KubeAPIServer, kube_client: Any):
    co = client.CustomObjectsApi(kube_client)
    ssa = "application/apply-patch+yaml"
    created = co.patch_namespaced_custom_object(
        *JS, "ml", "jobsets", "a", jobset("a", {"t": "1"}), field_manager="gkeml", _content_type=ssa
    )
    # Apply-create answers 201, which CustomObjectsApi (like with a real server) maps to None.
    assert created is None
    first = co.get_namespaced_custom_object(*JS, "ml", "jobsets", "a")
    again = co.patch_namespaced_custom_object(
        *JS, "ml", "jobsets", "a", jobset("a", {"t": "1"}), field_manager="gkeml", _content_type=ssa
    )
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert kube_api.count("PATCH", r"/jobsets/a$", status=201) == 1
    assert first["metadata"]["managedFields"][0]["manager"] == "gkeml"
    with pytest.raises(client.ApiException) as err:
        co.patch_namespaced_custom_object(
            *JS,
            "ml",
            "jobsets",
            "a",
            jobset("a", {"t": "2"}),
            field_manager="other",
            _content_type=ssa,
        )
    assert err.value.status == 409
    assert 'conflict with "gkeml": .metadata.labels.t' in json.loads(err.value.body)["message"]
    forced = co.patch_namespaced_custom_object(
        *JS,
        "ml",
        "jobsets",
        "a",
        jobset("a", {"t": "2"}),
        field_manager="other",
        force=True,
        _content_type=ssa,
    )
    assert forced["metadata"]["labels"] == {"t": "2"}
    with pytest.raises(client.ApiException) as err:
        co.patch_namespaced_custom_object(*JS, "ml", "jobsets", "a", jobset("a"), _content_type=ssa)
    assert err.value.status == 400  # fieldManager is required for apply


def test_label_and_field_selectors(kube_client: Any):
    core = client.CoreV1Api(kube_client)
    for name, labels in [("a", {"app": "x", "tier": "1"}), ("b", {"app": "y"}), ("c", {})]:
        core.create_namespaced_config_map("ml", configmap(name, labels))

    def names(**kw: Any) -> list[str]:
        return [i.metadata.name for i in core.list_namespaced_config_map("ml", **kw).items]

    assert names(label_selector="app=x") == ["a"]
    assert names(label_selector="app==y") == ["b"]
    assert names(label_selector="app!=x") == ["b", "c"]
    assert names(label_selector="app in (x, y)") == ["a", "b"]
    assert names(label_selector="app notin (x)") == ["b", "c"]
    assert names(label_selector="app,!tier") == ["b"]
    assert names(label_selector="!app") == ["c"]
    assert names(field_selector="metadata.name=b") == ["b"]
    assert names(field_selector="metadata.namespace=ml,metadata.name!=a") == ["b", "c"]
    for bad in ({"label_selector": "app in x"}, {"field_selector": "data.k=v"}):
        with pytest.raises(client.ApiException) as err:
            names(**bad)
        assert err.value.status == 400


def test_pagination_and_expired_continue(kube_api: KubeAPIServer, kube_client: Any):
    core = client.CoreV1Api(kube_client)
    for i in range(5):
        core.create_namespaced_config_map("ml", configmap(f"c{i}"))
    page = core.list_namespaced_config_map("ml", limit=2)
    seen = [i.metadata.name for i in page.items]
    assert page.metadata.remaining_item_count == 3
    page2 = core.list_namespaced_config_map("ml", limit=2, _continue=page.metadata._continue)
    seen += [i.metadata.name for i in page2.items]
    assert seen == ["c0", "c1", "c2", "c3"]
    # With a selector the apiserver cannot count what matches later: no remainingItemCount.
    selected = core.list_namespaced_config_map("ml", limit=2, field_selector="metadata.name!=c0")
    assert [i.metadata.name for i in selected.items] == ["c1", "c2"]
    assert selected.metadata._continue and selected.metadata.remaining_item_count is None
    core.create_namespaced_config_map("ml", configmap("later"))
    kube_api.compact()  # every rv before the current one is now gone
    with pytest.raises(client.ApiException) as err:
        core.list_namespaced_config_map("ml", limit=2, _continue=page2.metadata._continue)
    assert err.value.status == 410


# ---- watch ---------------------------------------------------------------------------------


def test_watch_resume_from_resource_version(kube_api: KubeAPIServer, kube_client: Any):
    co = client.CustomObjectsApi(kube_client)
    co.create_namespaced_custom_object(*JS, "ml", "jobsets", jobset("w1"))
    rv = co.list_namespaced_custom_object(*JS, "ml", "jobsets")["metadata"]["resourceVersion"]
    co.create_namespaced_custom_object(*JS, "ml", "jobsets", jobset("w2"))
    co.delete_namespaced_custom_object(*JS, "ml", "jobsets", "w1")
    w = watch.Watch()
    events = []
    for ev in w.stream(
        co.list_namespaced_custom_object,
        *JS,
        "ml",
        "jobsets",
        resource_version=rv,
        timeout_seconds=2,
    ):
        events.append((ev["type"], ev["object"]["metadata"]["name"]))
        if len(events) == 2:
            w.stop()
    assert events == [("ADDED", "w2"), ("DELETED", "w1")]


def test_watch_label_selector_transitions(kube_api: KubeAPIServer, kube_client: Any):
    core = client.CoreV1Api(kube_client)
    got: list[tuple[str, str]] = []
    w = watch.Watch()

    def consume() -> None:
        for ev in w.stream(
            core.list_namespaced_config_map, "ml", label_selector="app=x", timeout_seconds=5
        ):
            got.append((ev["type"], ev["object"].metadata.name))
            if len(got) == 3:
                w.stop()

    t, box = in_thread(consume)
    kube_api.wait_for_watches(1)
    core.create_namespaced_config_map("ml", configmap("skip"))
    core.create_namespaced_config_map("ml", configmap("m", {"app": "x"}))
    core.patch_namespaced_config_map("m", "ml", {"metadata": {"labels": {"app": "z"}}})
    core.patch_namespaced_config_map("skip", "ml", {"metadata": {"labels": {"app": "x"}}})
    t.join(5)
    assert "error" not in box
    assert got == [("ADDED", "m"), ("DELETED", "m"), ("ADDED", "skip")]


def test_watch_too_old_resource_version_gets_410(kube_api: KubeAPIServer, kube_client: Any):
    core = client.CoreV1Api(kube_client)
    core.create_namespaced_config_map("ml", configmap("old"))
    kube_api.compact()
    status, _, body = raw(
        kube_api, "GET", "/api/v1/namespaces/ml/configmaps?watch=1&resourceVersion=1"
    )
    event = json.loads(body.splitlines()[0])
    assert status == 200 and event["type"] == "ERROR"
    assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
    with pytest.raises(client.ApiException) as err:
        for _ in watch.Watch().stream(
            core.list_namespaced_config_map, "ml", resource_version="1", timeout_seconds=2
        ):
            pass
    assert err.value.status == 410


def test_small_history_window_expires(kube_api_factory: Callable[..., KubeAPIServer]):
    server = kube_api_factory(crd_dir=None, history_size=3, watch_max_seconds=0.3)
    for i in range(5):
        server.store.put(configmap(f"h{i}") | {"metadata": {"name": f"h{i}", "namespace": "ml"}})
    _, _, body = raw(
        server,
        "GET",
        "/api/v1/namespaces/ml/configmaps?watch=true&"
        f"resourceVersion={server.resource_version - 4}",
    )
    assert json.loads(body.splitlines()[0])["object"]["code"] == 410
    _, _, body = raw(
        server,
        "GET",
        "/api/v1/namespaces/ml/configmaps?watch=true"
        f"&resourceVersion={server.resource_version - 2}",
    )
    assert [json.loads(x)["type"] for x in body.splitlines()] == ["ADDED", "ADDED"]


def test_watch_bookmarks(kube_api_factory: Callable[..., KubeAPIServer]):
    server = kube_api_factory(crd_dir=None, bookmark_interval=0.1, watch_max_seconds=0.45)
    path = "/api/v1/namespaces/ml/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=30"
    status, headers, body = raw(server, "GET", path)
    types = [json.loads(line)["type"] for line in body.splitlines()]
    assert status == 200 and headers["transfer-encoding"] == "chunked"
    assert types.count("BOOKMARK") >= 3 and set(types) == {"BOOKMARK"}
    bookmark = json.loads(body.splitlines()[0])["object"]
    assert bookmark["kind"] == "Pod" and bookmark["metadata"]["resourceVersion"].isdigit()


def test_watch_ends_cleanly_when_server_stops(kube_api_factory: Callable[..., KubeAPIServer]):
    server = kube_api_factory(crd_dir=None)
    api = server.api_client()
    resp = client.CoreV1Api(api).list_namespaced_pod("ml", watch=True, _preload_content=False)
    server.wait_for_watches(1)
    lines, box = in_thread(lambda: list(iter_resp_lines(resp)))
    server.stop()
    lines.join(3)
    assert not lines.is_alive() and box == {"result": []}
    assert server.open_watches == 0


# ---- validation ----------------------------------------------------------------------------


def test_invalid_jobset_rejected_with_field_path(kube_client: Any):
    co = client.CustomObjectsApi(kube_client)
    bad = jobset("bad")
    bad["spec"]["replicatedJobs"] = "not-a-list"
    with pytest.raises(client.ApiException) as err:
        co.create_namespaced_custom_object(*JS, "ml", "jobsets", bad)
    status = json.loads(err.value.body)
    assert err.value.status == 422 and status["reason"] == "Invalid"
    assert status["details"]["causes"][0]["field"] == "spec.replicatedJobs"
    assert "must be of type array" in status["message"]
    with pytest.raises(client.ApiException) as err:
        co.create_namespaced_custom_object(*JS, "ml", "jobsets", jobset("bad", replicas="two"))
    assert json.loads(err.value.body)["details"]["causes"][0]["field"] == (
        "spec.replicatedJobs[0].replicas"
    )


def test_invalid_builtin_job_rejected(kube_api: KubeAPIServer, kube_client: Any):
    batch = client.BatchV1Api(kube_client)
    job: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"containers": "busybox", "restartPolicy": "Never"}}},
    }
    # The typed client refuses this body itself (pydantic), so send it raw.
    status, _, body = raw(kube_api, "POST", "/apis/batch/v1/namespaces/ml/jobs", job)
    assert status == 422
    assert json.loads(body)["details"]["causes"][0]["field"] == "spec.template.spec.containers"
    job["spec"]["template"]["spec"] = {"containers": [{"name": "c", "image": "i"}]}
    with pytest.raises(client.ApiException) as err:
        batch.create_namespaced_job("ml", job)
    assert "restartPolicy: Required value" in json.loads(err.value.body)["message"]
    with pytest.raises(client.ApiException) as err:
        client.CoreV1Api(kube_client).create_namespaced_config_map("ml", configmap("Bad_Name"))
    assert err.value.status == 422


def test_unknown_fields_pruned_or_strict(kube_api: KubeAPIServer, kube_client: Any):
    co = client.CustomObjectsApi(kube_client)
    body = jobset("u")
    body["spec"]["bogus"] = 1
    out = co.create_namespaced_custom_object(*JS, "ml", "jobsets", body)
    assert "bogus" not in out["spec"]
    assert kube_api.request_log[-1].status == 201
    body["metadata"]["name"] = "u2"
    with pytest.raises(client.ApiException) as err:
        co.create_namespaced_custom_object(*JS, "ml", "jobsets", body, field_validation="Strict")
    assert err.value.status == 400 and 'unknown field \\"spec.bogus\\"' in err.value.body
    status, headers, _ = raw(
        kube_api,
        "POST",
        "/apis/jobset.x-k8s.io/v1alpha2/namespaces/ml/jobsets",
        jobset("u3") | {"extra": 1},
    )
    assert status == 201 and 'unknown field \\"extra\\"' in headers["warning"].replace('"', '\\"')


def test_validation_can_be_disabled(kube_api_factory: Callable[..., KubeAPIServer]):
    server = kube_api_factory(validate=False)
    bad = jobset("bad")
    bad["spec"]["replicatedJobs"] = "not-a-list"
    with server.api_client() as api:
        out = client.CustomObjectsApi(api).create_namespaced_custom_object(
            *JS, "ml", "jobsets", bad
        )
    assert out["spec"]["replicatedJobs"] == "not-a-list"


# ---- faults ----------------------------------------------------------------------------------


def test_fault_429_has_retry_after_and_no_effect(kube_api: KubeAPIServer):
    kube_api.faults.inject("429", count=1, match=("POST", r"/configmaps$"), retry_after=3)
    with kube_api.api_client(retries=False) as api:
        core = client.CoreV1Api(api)
        with pytest.raises(client.ApiException) as err:
            core.create_namespaced_config_map("ml", configmap("r"))
        assert err.value.status == 429 and err.value.headers["Retry-After"] == "3"
        assert json.loads(err.value.body)["details"]["retryAfterSeconds"] == 3
        assert kube_api.objects("configmaps", "ml") == []
        core.create_namespaced_config_map("ml", configmap("r"))
    assert [o["metadata"]["name"] for o in kube_api.objects("configmaps", "ml")] == ["r"]


@pytest.mark.parametrize("kind", ["500", "502", "503", "504"])
def test_fault_5xx(kube_api: KubeAPIServer, kind: str):
    rule = kube_api.faults.inject(kind, match=("POST", "jobsets"))
    with kube_api.api_client(retries=False) as api:
        co = client.CustomObjectsApi(api)
        with pytest.raises(client.ApiException) as err:
            co.create_namespaced_custom_object(*JS, "ml", "jobsets", jobset("f"))
        assert err.value.status == int(kind) and rule.hits == 1
        assert kube_api.objects("jobsets") == []
        co.create_namespaced_custom_object(*JS, "ml", "jobsets", jobset("f"))
    assert kube_api.count("POST", "jobsets", status=int(kind)) == 1


def test_fault_reset_and_reset_after_write(kube_api: KubeAPIServer):
    with kube_api.api_client(retries=False) as api:
        core = client.CoreV1Api(api)
        kube_api.faults.inject("reset", match=("POST", "configmaps"))
        with pytest.raises(urllib3.exceptions.ProtocolError):
            core.create_namespaced_config_map("ml", configmap("x"))
        assert kube_api.objects("configmaps") == []
        kube_api.faults.inject("reset-after-write", match=("POST", "configmaps"))
        with pytest.raises(urllib3.exceptions.ProtocolError):
            core.create_namespaced_config_map("ml", configmap("x"))
        assert len(kube_api.objects("configmaps")) == 1
        with pytest.raises(client.ApiException) as err:  # a blind retry sees its own write
            core.create_namespaced_config_map("ml", configmap("x"))
        assert err.value.status == 409
    kube_api.faults.inject("reset", match=("GET", "configmaps"))
    with kube_api.api_client() as api:  # urllib3's default Retry re-sends idempotent GETs
        assert len(client.CoreV1Api(api).list_namespaced_config_map("ml").items) == 1
    assert kube_api.count("GET", "configmaps") == 2


def test_fault_timeout_and_slow(kube_api: KubeAPIServer):
    kube_api.faults.inject("timeout", match=("GET", "configmaps"), delay=5)
    with kube_api.api_client(retries=False) as api:
        core = client.CoreV1Api(api)
        with pytest.raises(urllib3.exceptions.ReadTimeoutError):
            core.list_namespaced_config_map("ml", _request_timeout=0.3)
        kube_api.faults.inject("slow", match=("GET", "configmaps"), delay=0.2)
        assert core.list_namespaced_config_map("ml", _request_timeout=3).items == []


def test_cut_watches(kube_api: KubeAPIServer, kube_client: Any):
    core = client.CoreV1Api(kube_client)
    t, box = in_thread(
        lambda: list(watch.Watch().stream(core.list_namespaced_pod, "ml", timeout_seconds=5))
    )
    kube_api.wait_for_watches(1)
    assert kube_api.cut_watches() == 1
    t.join(5)
    assert isinstance(box.get("error"), urllib3.exceptions.ProtocolError)
    kube_api.wait_for(lambda: kube_api.open_watches == 0)
    for i in range(3):
        core.create_namespaced_config_map("ml", configmap(f"c{i}"))
    kube_api.faults.inject("cut-watch", after_events=2)
    resp = core.list_namespaced_config_map("ml", watch=True, _preload_content=False)
    lines: list[str] = []
    with pytest.raises(urllib3.exceptions.ProtocolError):
        lines.extend(iter_resp_lines(resp))
    assert len(lines) == 2


def test_random_faults_are_seeded(kube_api_factory: Callable[..., KubeAPIServer]):
    def run() -> list[str]:
        server = kube_api_factory(crd_dir=None)
        server.faults.random(rate=0.5, kinds=["500", "503"], seed=7)
        with server.api_client(retries=False) as api:
            core = client.CoreV1Api(api)
            for _ in range(20):
                with contextlib.suppress(client.ApiException):
                    core.list_namespaced_config_map("ml")
        return [f.kind for f in server.faults.fired]

    first = run()
    assert first == run() and 3 < len(first) < 17


def test_forbidden_namespace(kube_api_factory: Callable[..., KubeAPIServer]):
    server = kube_api_factory(forbidden_namespaces=["locked"], namespaces=["default", "locked"])
    with server.api_client() as api:
        co = client.CustomObjectsApi(api)
        for call in (
            lambda: co.list_namespaced_custom_object(*JS, "locked", "jobsets"),
            lambda: co.create_namespaced_custom_object(*JS, "locked", "jobsets", jobset("x")),
        ):
            with pytest.raises(client.ApiException) as err:
                call()
            assert err.value.status == 403
            assert json.loads(err.value.body)["reason"] == "Forbidden"
        assert co.list_namespaced_custom_object(*JS, "default", "jobsets")["items"] == []


# ---- pod logs, controllers, kubeconfig --------------------------------------------------


def test_pod_logs_and_follow(kube_api: KubeAPIServer, kube_client: Any):
    core = client.CoreV1Api(kube_client)
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "main", "image": "i"}]}}
    assert core.create_namespaced_pod("ml", pod).status.phase == "Pending"
    kube_api.set_pod_log("ml", "p", "line1\nline2\n")
    assert core.read_namespaced_pod_log("p", "ml") == "line1\nline2\n"
    assert core.read_namespaced_pod_log("p", "ml", tail_lines=1) == "line2\n"
    got: list[str] = []

    def follow() -> None:
        for line in watch.Watch().stream(core.read_namespaced_pod_log, "p", "ml"):
            got.append(line)

    t, box = in_thread(follow)
    kube_api.wait_for(lambda: len(got) == 2)
    kube_api.append_pod_log("ml", "p", "line3\n")
    kube_api.wait_for(lambda: len(got) == 3)
    kube_api.store.update_status("pods", "ml", "p", {"phase": "Succeeded"})
    t.join(5)
    assert not t.is_alive() and "error" not in box and got == ["line1", "line2", "line3"]
    two = {
        "metadata": {"name": "two"},
        "spec": {"containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "i"}]},
    }
    core.create_namespaced_pod("ml", two)
    with pytest.raises(client.ApiException) as err:
        core.read_namespaced_pod_log("two", "ml")
    assert err.value.status == 400 and "choose one of: [a b]" in err.value.body


def test_store_helpers_drive_watches(kube_api: KubeAPIServer, kube_client: Any):
    co = client.CustomObjectsApi(kube_client)
    wl = {
        "apiVersion": f"{KQ}/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "wl", "namespace": "ml"},
        "spec": {
            "queueName": "q",
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
                }
            ],
        },
    }
    created = kube_api.store.put(wl)
    w = watch.Watch()
    seen: list[dict[str, Any]] = []

    def consume() -> None:
        for ev in w.stream(
            co.list_namespaced_custom_object,
            KQ,
            "v1beta2",
            "ml",
            "workloads",
            resource_version=created["metadata"]["resourceVersion"],
            timeout_seconds=5,
        ):
            seen.append(ev)
            w.stop()

    t, _ = in_thread(consume)
    kube_api.wait_for_watches(1)
    cond = {
        "type": "QuotaReserved",
        "status": "True",
        "reason": "R",
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    kube_api.store.update_status("workloads", "ml", "wl", {"conditions": [cond]})
    t.join(5)
    assert seen[0]["type"] == "MODIFIED"
    assert seen[0]["object"]["status"]["conditions"][0]["type"] == "QuotaReserved"
    assert kube_api.objects("workloads", "ml")[0]["metadata"]["generation"] == 1


def test_finalizers_and_garbage_collection(kube_api: KubeAPIServer, kube_client: Any):
    core = client.CoreV1Api(kube_client)
    owner = core.create_namespaced_config_map(
        "ml", {"metadata": {"name": "owner", "finalizers": ["x/y"]}}
    )
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
    core.create_namespaced_config_map("ml", {"metadata": {"name": "dep", "ownerReferences": [ref]}})
    core.delete_namespaced_config_map("owner", "ml")
    assert core.read_namespaced_config_map("owner", "ml").metadata.deletion_timestamp
    core.patch_namespaced_config_map("owner", "ml", {"metadata": {"finalizers": None}})
    assert kube_api.objects("configmaps", "ml") == []


def test_kubeconfig(kube_api: KubeAPIServer, tmp_path: Path):
    path = kube_api.kubeconfig(tmp_path / "kubeconfig", namespace="ml")
    api = config.new_client_from_config(config_file=str(path))
    names = [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items]
    assert names == ["default", "kube-system", "ml"]
    api.close()
