"""Transient faults are retried (honouring Retry-After); client errors are not, and keep the
API server's reason."""

from __future__ import annotations

import pytest

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.backends.kubernetes.api.transport import ApiRetrySettings, Transport
from gkeml_sdk.errors import ClusterError, NotFoundError

CONFIG_MAPS = resource("v1", "ConfigMap")


def config_map(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ml"},
        "data": {"a": "1"},
    }


@pytest.fixture
def kube(kube_api):
    sleeps: list[float] = []
    transport = Transport(
        kube_api.api_client(),
        api_retry=ApiRetrySettings(attempts=5, initial_seconds=0.01, max_seconds=0.02),
        # Long enough that no answer of a loaded machine's server runs out of it; the
        # "timeout" fault never answers, so it runs out whatever the load.
        request_timeout=5.0,
        sleep=sleeps.append,
    )
    client = KubeClient(transport)
    client.sleeps = sleeps  # type: ignore[attr-defined]
    return client


@pytest.mark.parametrize("kind", ["429", "500", "502", "503", "504", "reset", "timeout"])
def test_transient_faults_are_retried_and_the_write_lands_once(kube_api, kube, kind):
    kube_api.faults.inject(kind=kind, count=2, match=("PATCH", r"/configmaps/a$"))
    kube.apply(config_map("a"))
    assert kube_api.store.get("configmaps", "ml", "a")["data"] == {"a": "1"}
    assert kube.transport.requests_sent == 3
    assert len(kube.sleeps) == 2


def test_retry_after_is_honoured(kube_api, kube):
    kube_api.faults.inject(kind="429", count=1, retry_after=7)
    kube.find(CONFIG_MAPS, "missing", "ml")
    assert kube.sleeps == [7.0]


def test_a_write_applied_before_a_reset_is_not_duplicated(kube_api, kube):
    kube_api.faults.inject(kind="reset-after-write", count=1, match=("PATCH", r"/configmaps/a$"))
    kube.apply(config_map("a"))
    assert len(kube_api.objects("configmaps", "ml")) == 1


def test_forbidden_is_not_retried_and_says_what_to_do(kube_api, kube):
    kube_api.forbid_namespace("ml")
    with pytest.raises(ClusterError) as err:
        kube.apply(config_map("a"))
    assert err.value.status == 403 and err.value.reason == "Forbidden"
    assert "permission" in str(err.value)
    assert kube.transport.requests_sent == 1 and kube.sleeps == []


def test_not_found_keeps_the_servers_message(kube):
    with pytest.raises(NotFoundError) as err:
        kube.get(CONFIG_MAPS, "nope", "ml")
    assert err.value.status == 404 and err.value.reason == "NotFound"
    assert "nope" in str(err.value)


def test_schema_rejection_is_reported_with_the_field(kube):
    bad = config_map("b")
    bad["data"] = {"a": 1}  # ConfigMap values must be strings
    with pytest.raises(ClusterError) as err:
        kube.apply(bad)
    assert err.value.status == 422 and "data" in str(err.value)
    assert kube.transport.requests_sent == 1 and kube.sleeps == []


def test_giving_up_says_so(kube_api, kube):
    kube_api.faults.inject(kind="503", count=None)
    with pytest.raises(ClusterError, match="gave up after 5 attempts"):
        kube.find(CONFIG_MAPS, "a", "ml")
    # Five requests with a capped backoff between them (counted, not timed: load stretches
    # wall time, never the number of attempts or the delays asked for).
    assert kube.transport.requests_sent == 5
    assert len(kube.sleeps) == 4 and all(s <= 0.02 for s in kube.sleeps)


def test_a_webhook_refusal_is_not_called_a_permission_problem(kube):
    # Kueue's (and LWS's) webhooks answer 403 Forbidden with no details when they refuse.
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "j",
            "namespace": "ml",
            "labels": {"kueue.x-k8s.io/queue-name": "Team_A"},
        },
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            }
        },
    }
    with pytest.raises(ClusterError) as refused:
        kube.create(job)
    assert refused.value.status == 403
    text = str(refused.value)
    assert 'admission webhook "vjob.kb.io" denied the request' in text
    assert "lowercase RFC 1123 subdomain" in text
    assert "refused the object (this is not a permission problem)" in text
    assert "RBAC" not in text


@pytest.mark.parametrize("kind", ["503", "reset"])
def test_an_injected_api_client_is_used_as_given_and_retried_only_by_our_policy(kube_api, kind):
    import urllib3

    # The embedder's own urllib3 policy would retry 503s and resets 6 times per request.
    theirs = kube_api.api_client(retries=urllib3.Retry(total=5, status_forcelist=[503]))
    pool = theirs.rest_client.pool_manager
    before = dict(pool.connection_pool_kw)
    sleeps: list[float] = []
    transport = Transport(
        theirs, api_retry=ApiRetrySettings(attempts=3), request_timeout=5.0, sleep=sleeps.append
    )
    kube_api.faults.inject(kind=kind, count=None, match=("GET", r"/configmaps/a$"))
    with pytest.raises(ClusterError, match="gave up after 3 attempts"):
        KubeClient(transport).find(CONFIG_MAPS, "a", "ml")
    assert kube_api.count("GET", r"/configmaps/a$") == 3 == transport.requests_sent
    assert len(sleeps) == 2
    assert pool is theirs.rest_client.pool_manager
    assert pool.connection_pool_kw == before
    assert pool.connection_pool_kw["retries"] is theirs.configuration.retries
    kube_api.faults.clear()
    assert KubeClient(transport).find(CONFIG_MAPS, "a", "ml") is None  # and it still works
