"""The official Kubernetes Python client (Debian's python3-kubernetes) against gpufleet's
Kubernetes door (docs/kubernetes.md). Run by KubernetesDoor.PythonClient with a kubeconfig from
`gpufleet kubeconfig`; prints one line per check and exits non-zero on the first failure."""
import sys

from kubernetes import client, config, dynamic, watch

config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()
GROUP, VERSION, PLURAL = "kubeflow.org", "v1", "pytorchjobs"
policy = {
    "apiVersion": "policy.one.alibabacloud.com/v1alpha1", "kind": "PropagationPolicy",
    "metadata": {"name": "py-gang", "namespace": "py"},
    "spec": {"placement": {"replicaScheduling": {"replicaSchedulingType": "Divided",
                                                  "customSchedulingType": "Gang"}},
             "resourceSelectors": [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"}]},
}
job = {
    "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
    "metadata": {"name": "py-job", "namespace": "py"},
    "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "restartPolicy": "Never",
             "template": {"spec": {"containers": [{"name": "pytorch", "image": "x",
                                                    "resources": {"requests": {"cpu": "1"}}}]}}}}},
}

# P1: custom objects, with no discovery.
co = client.CustomObjectsApi(api)
co.create_namespaced_custom_object("policy.one.alibabacloud.com", "v1alpha1", "py",
                                   "propagationpolicies", policy)
created = co.create_namespaced_custom_object(GROUP, VERSION, "py", PLURAL, job)
rv = created["metadata"]["resourceVersion"]
print("created", created["metadata"]["name"], created["metadata"]["uid"])
listed = co.list_namespaced_custom_object(GROUP, VERSION, "py", PLURAL)
assert [i["metadata"]["name"] for i in listed["items"]] == ["py-job"], listed
assert listed["metadata"]["resourceVersion"], listed["metadata"]
got = co.get_namespaced_custom_object(GROUP, VERSION, "py", PLURAL, "py-job")
assert got["kind"] == "PyTorchJob"
patched = co.patch_namespaced_custom_object(GROUP, VERSION, "py", PLURAL, "py-job",
                                            {"spec": {"runPolicy": {"suspend": True}}})
assert patched["spec"]["runPolicy"]["suspend"] is True, patched["spec"]
print("patched suspend")
try:
    co.patch_namespaced_custom_object(GROUP, VERSION, "py", PLURAL, "py-job",
                                      {"spec": {"runPolicy": {"backoffLimit": 9}}})
    raise SystemExit("a spec change was accepted")
except client.ApiException as e:
    assert e.status == 422 and "Invalid" in e.body, e.body
    print("refused", e.status)
status = co.get_namespaced_custom_object_status(GROUP, VERSION, "py", PLURAL, "py-job")
assert status["status"]["conditions"], status

# A watch from the list's resourceVersion sees the change, then the deletion.
w = watch.Watch()
seen = []
co.patch_namespaced_custom_object(GROUP, VERSION, "py", PLURAL, "py-job",
                                  {"spec": {"runPolicy": {"suspend": False}}})
for event in w.stream(co.list_namespaced_custom_object, GROUP, VERSION, "py", PLURAL,
                      resource_version=rv, timeout_seconds=20):
    seen.append(event["type"])
    if event["type"] == "MODIFIED" and len(seen) == 1:
        co.delete_namespaced_custom_object(GROUP, VERSION, "py", PLURAL, "py-job")
    if event["type"] == "DELETED":
        w.stop()
assert seen[0] == "MODIFIED" and seen[-1] == "DELETED", seen
print("watched", ",".join(seen))

# P3: the typed core client validates every required field of what it decodes.
core = client.CoreV1Api(api)
nodes = core.list_node()
assert nodes.items, "no nodes"
assert nodes.items[0].status.node_info.architecture == "amd64"
print("nodes", len(nodes.items))
pods = core.list_namespaced_pod("default")
print("pods", len(pods.items), sorted(p.status.phase for p in pods.items))
events = core.list_namespaced_event("default")
assert all(e.involved_object.kind == "PyTorchJob" for e in events.items)
print("events", sorted({e.reason for e in events.items}))

# P4: the dynamic client discovers the kind.
d = dynamic.DynamicClient(api)
jobs = d.resources.get(api_version="kubeflow.org/v1", kind="PyTorchJob")
print("dynamic", [i.metadata.name for i in jobs.get(namespace="default").items])
print("ok")
