"""deploy/kubernetes/: every manifest against the strict schemas of Kubernetes 1.34 to
1.37 (kubernetes-validate's own `validate(..., strict=True)`, what its `--strict` runs,
but a missing schema fails here where the command only warns), the kustomization's
resource list built without kubectl, and what each object is there for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_validate import validate
from kubernetes_validate.utils import all_versions

from sandboxrun._backends.kubernetes.pod import WorkspaceVolume, pod_manifest
from sandboxrun._backends.labels import MANAGED
from sandboxrun._types import ExecRequest
from tests.pss import restricted_violations
from tests.test_kubernetes_pod import VERSIONS, settings

DEPLOY = Path(__file__).resolve().parent.parent / "deploy" / "kubernetes"
KUSTOMIZE = {"Kustomization", "Component"}  # kustomize's own files: not API objects
CLUSTER_SCOPED = {"Namespace", "RuntimeClass"}


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def kustomization_files(folder: Path) -> list[Path]:
    """The files a kustomization (or component) lists, each checked to exist; a folder
    listed is a kustomization of its own, followed."""
    [spec] = documents(folder / "kustomization.yaml")
    assert spec["kind"] in KUSTOMIZE
    found: list[Path] = []
    for entry in [*spec.get("resources", []), *spec.get("components", [])]:
        path = folder / entry
        assert path.exists(), f"{folder / 'kustomization.yaml'} lists {entry}: missing"
        found += kustomization_files(path) if path.is_dir() else [path]
    return found


def objects() -> list[dict[str, Any]]:
    """The base and the optional gVisor component: every API object deploy/ ships."""
    files = kustomization_files(DEPLOY) + kustomization_files(DEPLOY / "gvisor")
    return [d for f in files for d in documents(f)]


def by_name(kind: str, name: str) -> dict[str, Any]:
    [found] = [o for o in objects() if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def test_the_schemas_cover_every_supported_version() -> None:
    """kubernetes-validate ships schemas for 1.25 to 1.37 (as of 1.37.0): the versions
    tested are there, not replaced by an older one."""
    shipped = {".".join(v.split(".")[:2]) for v in all_versions()}
    assert set(VERSIONS) <= shipped


def test_every_yaml_file_is_in_a_kustomization() -> None:
    listed = set(kustomization_files(DEPLOY)) | set(kustomization_files(DEPLOY / "gvisor"))
    files = {p for p in DEPLOY.rglob("*.yaml") if p.name != "kustomization.yaml"}
    assert files == listed


@pytest.mark.parametrize("version", VERSIONS)
def test_every_manifest_passes_the_strict_schemas(version: str) -> None:
    found = objects()
    assert len(found) == 10
    for obj in found:
        assert validate(obj, version, strict=True) == version, obj["metadata"]["name"]


def test_namespaced_objects_name_the_namespace() -> None:
    """So `kubectl apply -f` without kustomize puts them in the same place."""
    [base] = documents(DEPLOY / "kustomization.yaml")
    for obj in objects():
        if obj["kind"] not in CLUSTER_SCOPED:
            assert obj["metadata"]["namespace"] == base["namespace"], obj["metadata"]["name"]


def test_the_namespace_enforces_the_restricted_standard() -> None:
    labels = by_name("Namespace", "sandboxrun")["metadata"]["labels"]
    for mode in ("enforce", "audit", "warn"):
        assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted"


def test_the_role_gives_pods_and_attach_only() -> None:
    rules = by_name("Role", "sandboxrun-hooks")["rules"]
    assert rules == [
        {"apiGroups": [""], "resources": ["pods"],
         "verbs": ["create", "get", "list", "watch", "delete", "patch"]},
        {"apiGroups": [""], "resources": ["pods/attach"], "verbs": ["create", "get"]},
    ]  # fmt: skip
    assert not [o for o in objects() if o["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    binding = by_name("RoleBinding", "sandboxrun-hooks")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "sandboxrun", "namespace": "sandboxrun"}
    ]
    serve = by_name("Deployment", "sandboxrun-serve")["spec"]["template"]["spec"]
    assert serve["serviceAccountName"] == "sandboxrun"


def _selects(policy: dict[str, Any], labels: dict[str, str]) -> bool:
    wanted = policy["spec"]["podSelector"]["matchLabels"]
    return all(labels.get(k) == v for k, v in wanted.items())


def test_hook_pods_reach_nobody_and_serve_only_the_api_server() -> None:
    hook_pod = pod_manifest(
        ExecRequest(argv=("true",), stdin=b"", workdir="/ws", mounts=("/ws",)), settings(),
        name="h", volumes=(WorkspaceVolume("pvc", "c", "/ws"),), now=0,
    )  # fmt: skip
    template = by_name("Deployment", "sandboxrun-serve")["spec"]["template"]
    deny = by_name("NetworkPolicy", "sandboxrun-hooks-deny-all")
    assert deny["spec"]["podSelector"]["matchLabels"] == {MANAGED: "1"}
    assert _selects(deny, hook_pod["metadata"]["labels"])
    assert not _selects(deny, template["metadata"]["labels"])  # serve is not a hook
    assert set(deny["spec"]["policyTypes"]) == {"Ingress", "Egress"}
    assert "egress" not in deny["spec"] and "ingress" not in deny["spec"]
    serve = by_name("NetworkPolicy", "sandboxrun-serve-egress")
    assert _selects(serve, template["metadata"]["labels"])
    assert not _selects(serve, hook_pod["metadata"]["labels"])
    [rule] = serve["spec"]["egress"]
    assert [t["ipBlock"]["cidr"] for t in rule["to"]] == ["192.0.2.1/32"]  # a placeholder
    assert {p["port"] for p in rule["ports"]} == {443, 6443}


def test_serve_runs_hardened_with_probes_and_resources() -> None:
    deployment = by_name("Deployment", "sandboxrun-serve")
    spec = deployment["spec"]["template"]["spec"]
    assert restricted_violations(spec) == []
    for c in [*spec["initContainers"], *spec["containers"]]:
        assert c["securityContext"]["readOnlyRootFilesystem"] is True
        assert c["resources"]["limits"] and c["resources"]["requests"]
    [serve] = spec["containers"]
    argv = serve["command"]
    assert argv[:2] == ["sandboxrun", "serve"]
    assert argv[argv.index("--listen") + 1] == "0.0.0.0:8765"
    assert argv[argv.index("--token-file") + 1] == "/run/sandboxrun/token"
    # Plain HTTP probes: they need no token (test_serve.py proves the server's side).
    assert serve["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert serve["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert argv[argv.index("--log-format") + 1] == "json"
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/path"] == "/metrics"
    assert annotations["prometheus.io/port"] == str(serve["ports"][0]["containerPort"])
    assert spec["securityContext"]["runAsUser"] != 0
    [secret] = [v for v in spec["volumes"] if "secret" in v]
    assert secret["secret"]["secretName"] == "sandboxrun-serve-token"
    service = by_name("Service", "sandboxrun-serve")
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] == serve["ports"][0]["name"]


def test_the_runtime_class_is_optional() -> None:
    base = {o["kind"] for f in kustomization_files(DEPLOY) for o in documents(f)}
    assert "RuntimeClass" not in base
    assert by_name("RuntimeClass", "gvisor")["handler"] == "runsc"


def test_the_strict_schemas_are_not_blind() -> None:
    """A misspelt field fails, and a kind with no schema fails too (the command would only
    warn): a green run above means every object was checked."""
    from kubernetes_validate import ValidationError
    from kubernetes_validate.utils import SchemaNotFoundError

    service = by_name("Service", "sandboxrun-serve")
    with pytest.raises(ValidationError):
        validate({**service, "spec": {**service["spec"], "selektor": {}}}, "1.34", strict=True)
    with pytest.raises(SchemaNotFoundError):
        validate({"apiVersion": "example.com/v1", "kind": "Nope", "metadata": {}}, "1.34",
                 strict=True)  # fmt: skip


def test_the_shipped_config_is_valid_settings_for_the_kubernetes_backend(tmp_path: Path) -> None:
    """The ConfigMap's config.toml is what serve reads for every request: it must load,
    choose the Kubernetes backend in-cluster, name the claim serve itself mounts, and
    confine workspaces to it (`serve --listen` refuses to start without allowed_roots)."""
    from sandboxrun import Settings

    config = tmp_path / "config.toml"
    config.write_text(by_name("ConfigMap", "sandboxrun-config")["data"]["config.toml"])
    s = Settings.load(config=config)
    assert (s.backend, s.kubeconfig, s.kube_namespace) == ("kubernetes", "in-cluster", "sandboxrun")
    assert s.fail_closed
    [volume] = s.kube_volumes
    spec = by_name("Deployment", "sandboxrun-serve")["spec"]["template"]["spec"]
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
              for v in spec["volumes"] if "persistentVolumeClaim" in v}  # fmt: skip
    [serve] = [c for c in spec["containers"] if c["name"] == "serve"]
    mounted = {m["mountPath"]: claims.get(m["name"]) for m in serve["volumeMounts"]}
    assert mounted[volume.path] == volume.source
    assert "--listen" in serve["command"] and s.allowed_roots == (volume.path,)
    assert all(m.get("readOnly") for m in serve["volumeMounts"] if m["name"] in claims)
