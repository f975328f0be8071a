"""The Kubernetes hook pod (`_backends/kubernetes/pod.py`): every hardening field, the Pod
Security Standard `restricted`, a read-only workspace, nothing of the host's, and the
API's strict schemas of every supported Kubernetes version. Offline: no cluster."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from kubernetes_validate import validate

from sandboxrun._backends import labels
from sandboxrun._backends.kubernetes.pod import GRACE, WorkspaceVolume, pod_manifest
from sandboxrun._errors import ConfigError
from sandboxrun._settings import Settings, parse_size
from sandboxrun._types import ExecRequest
from tests.pss import restricted_violations
from tests.test_layout import _imports

VERSIONS = ("1.34", "1.35", "1.36", "1.37")
NOW = 1_800_000_000.0
WS = "/srv/ws/tenant-a"
PVC = WorkspaceVolume("pvc", "workspaces", WS, sub_path="tenant-a")
HOST = WorkspaceVolume("hostPath", "/var/lib/sandboxrun/ws/tenant-a", WS)
LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


EMPTY_CONFIG = Path(tempfile.mkdtemp(prefix="sandboxrun-k8s-")) / "config.toml"
EMPTY_CONFIG.write_text("")


def settings(**values: Any) -> Settings:
    """Defaults and `values` only: never this machine's own config file."""
    return Settings.load(config=EMPTY_CONFIG, **values)


def request(**values: Any) -> ExecRequest:
    fields: dict[str, Any] = {
        "argv": (f"{WS}/.clinerules/hooks/PreToolUse",), "stdin": b"{}", "workdir": WS,
        "mounts": (WS,), "timeout": 30.0, "label": f"{WS}/.clinerules/hooks/PreToolUse",
    }  # fmt: skip
    return ExecRequest(**{**fields, **values})


def pod(req: ExecRequest | None = None, s: Settings | None = None,
        volumes: tuple[WorkspaceVolume, ...] = (PVC,)) -> dict[str, Any]:  # fmt: skip
    return pod_manifest(req or request(), s or settings(), name="sandboxrun-hook-1",
                        volumes=volumes, namespace="sandboxrun", run="abc123", now=NOW)  # fmt: skip


def container(manifest: dict[str, Any]) -> dict[str, Any]:
    [only] = manifest["spec"]["containers"]
    return only


def test_every_hardening_field() -> None:
    manifest = pod()
    spec, c = manifest["spec"], container(manifest)
    assert spec["restartPolicy"] == "Never"
    assert spec["activeDeadlineSeconds"] == 30 + GRACE
    assert spec["automountServiceAccountToken"] is False
    assert spec["enableServiceLinks"] is False
    assert spec["hostNetwork"] is spec["hostPID"] is spec["hostIPC"] is False
    assert spec["terminationGracePeriodSeconds"] == 0
    assert "runtimeClassName" not in spec  # only when the settings name one
    assert "serviceAccountName" not in spec and "initContainers" not in spec
    assert spec["securityContext"] == {
        "runAsNonRoot": True, "runAsUser": 65534, "runAsGroup": 65534,
        "seccompProfile": {"type": "RuntimeDefault"},
    }  # fmt: skip
    assert c["stdin"] is True and c["stdinOnce"] is True and c["tty"] is False
    assert c["securityContext"] == {
        "allowPrivilegeEscalation": False, "privileged": False, "readOnlyRootFilesystem": True,
        "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]},
    }  # fmt: skip
    assert "ports" not in c and "args" not in c
    assert c["command"] == [f"{WS}/.clinerules/hooks/PreToolUse"]
    assert c["workingDir"] == WS


def test_limits_are_the_docker_defaults_and_requests_equal_them() -> None:
    """CPU and memory as the Docker backend gives them (`cpus`, `memory`); requests equal
    limits (a Guaranteed pod); /tmp and every home folder in memory, `tmpfs_size` each."""
    defaults = settings()
    c = container(pod())
    limits = c["resources"]["limits"]
    assert c["resources"]["requests"] == limits
    assert limits["cpu"] == "1000m" and defaults.cpus == 1.0
    assert limits["memory"] == str(parse_size("512m")) and defaults.memory == "512m"
    assert int(limits["ephemeral-storage"]) >= defaults.output_limit
    scratch = [v for v in pod()["spec"]["volumes"] if "emptyDir" in v]
    assert scratch and all(
        v["emptyDir"] == {"medium": "Memory", "sizeLimit": str(64 << 20)} for v in scratch
    )
    paths = {m["mountPath"] for m in c["volumeMounts"] if m["name"].startswith(("tmp", "home"))}
    home = next(e["value"] for e in c["env"] if e["name"] == "HOME")
    assert {"/tmp", home} <= paths
    c = container(pod(s=settings(cpus=0.5, memory="1g", tmpfs_size="8m")))
    assert c["resources"]["limits"]["cpu"] == "500m"
    assert c["resources"]["limits"]["memory"] == str(1 << 30)


def test_settings_shape_the_pod() -> None:
    manifest = pod(s=settings(runtime_class="gvisor", user="1234:5678", groups=(42,)))
    assert manifest["spec"]["runtimeClassName"] == "gvisor"
    context = manifest["spec"]["securityContext"]
    assert (context["runAsUser"], context["runAsGroup"]) == (1234, 5678)
    assert context["supplementalGroups"] == [42]
    for bad in ("gVisor", "a_b", "-x", "x" * 254):
        with pytest.raises(ConfigError, match="runtime_class"):
            settings(runtime_class=bad)
    with pytest.raises(ConfigError, match="root"):
        settings(user="0:0")


def test_deadline_is_the_hooks_plus_grace() -> None:
    manifest = pod(request(timeout=7.2))
    assert manifest["spec"]["activeDeadlineSeconds"] == 8 + GRACE
    assert manifest["metadata"]["labels"][labels.DEADLINE] == str(int(NOW) + 8 + GRACE)


def test_passes_the_restricted_pod_security_standard() -> None:
    manifest = pod(s=settings(runtime_class="gvisor", user="1000", groups=(5,)))
    assert restricted_violations(manifest["spec"], manifest["metadata"]["annotations"]) == []


def test_the_checker_sees_what_restricted_refuses() -> None:
    """The hand-written check is not blind: each weakening is caught, and a hostPath
    workspace is one (the `restricted` namespace refuses it: see `WorkspaceVolume`)."""
    assert restricted_violations(pod(volumes=(HOST,))["spec"]) == [
        "volume workspace-0: type ['hostPath'] not allowed"
    ]
    weakened: list[tuple[str, Any]] = [
        ("hostPID", True), ("securityContext", {}),
    ]  # fmt: skip
    for key, value in weakened:
        spec = {**pod()["spec"], key: value}
        assert restricted_violations(spec), key
    for key, value in [("allowPrivilegeEscalation", True), ("capabilities", {"drop": []}),
                       ("privileged", True), ("runAsUser", 0), ("procMount", "Unmasked"),
                       ("seccompProfile", {"type": "Unconfined"})]:  # fmt: skip
        spec = pod()["spec"]
        spec["containers"][0]["securityContext"][key] = value
        assert restricted_violations(spec), key


@pytest.mark.parametrize(
    "volumes", [(PVC,), (HOST,), (PVC, WorkspaceVolume("pvc", "hooks", "/opt/hooks"))]
)
def test_a_workspace_is_never_writable(volumes: tuple[WorkspaceVolume, ...]) -> None:
    """Every volume that is not an empty scratch folder of the pod's own is read-only,
    also below it (`recursiveReadOnly`), and a claim is attached read-only."""
    req = request(mounts=tuple(v.path for v in volumes))
    manifest = pod(req, volumes=volumes)
    scratch = {v["name"] for v in manifest["spec"]["volumes"] if set(v) == {"name", "emptyDir"}}
    for mount in container(manifest)["volumeMounts"]:
        if mount["name"] not in scratch:
            assert mount["readOnly"] is True and mount["recursiveReadOnly"] == "Enabled", mount
    sources = [v for v in manifest["spec"]["volumes"] if v["name"] not in scratch]
    assert len(sources) == len(volumes)
    for volume in sources:
        if "persistentVolumeClaim" in volume:
            assert volume["persistentVolumeClaim"]["readOnly"] is True
        else:
            assert volume["hostPath"]["type"] == "Directory"  # never created by the kubelet
    assert container(pod(volumes=(PVC,)))["volumeMounts"][-1]["subPath"] == "tenant-a"


def test_what_a_hook_would_not_see_is_refused() -> None:
    with pytest.raises(ConfigError, match="/elsewhere"):
        pod(request(mounts=(WS, "/elsewhere")))
    with pytest.raises(ConfigError, match="none"):
        pod(volumes=())
    with pytest.raises(ValueError, match="absolute"):  # refused when the settings are read
        WorkspaceVolume("pvc", "c", "relative")
    with pytest.raises(ValueError, match="sub_path"):
        WorkspaceVolume("pvc", "c", "/w", sub_path="../other-tenant")
    unsupported_requests = (
        {"state": "/s"}, {"tmp": "/t"}, {"env_file": "/e"}, {"private_dirs": (("/d", "/h"),)},
    )  # fmt: skip
    for unsupported in unsupported_requests:
        with pytest.raises(ConfigError, match="not supported on the Kubernetes backend"):
            pod(request(**unsupported))


def test_the_environment_carries_nothing_of_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDBOXRUN_TEST_SECRET", "hunter2")
    monkeypatch.setenv("KUBECONFIG", "/home/me/.kube/config")
    env = container(pod(request(env={"CLINE_HOOK": "1"})))["env"]
    names = [e["name"] for e in env]
    assert names == ["HOME", "PATH", "LANG", "TMPDIR", "CLINE_HOOK"]
    assert "hunter2" not in str(env) and "kube" not in str(env)
    assert all(set(e) == {"name", "value"} for e in env)  # no valueFrom: no secret, no field


def test_dollar_references_reach_the_hook_literally() -> None:
    """The kubelet expands $(NAME) in commands and env values; `$$` keeps a `$`."""
    c = container(pod(request(argv=("sh", "-c", "echo $(HOME) $$ $"), env={"X": "$(PATH)"})))
    assert c["command"] == ["sh", "-c", "echo $$(HOME) $$$$ $$"]
    assert {"name": "X", "value": "$$(PATH)"} in c["env"]


def test_labels_are_the_shared_contract_and_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = pod()
    found = manifest["metadata"]["labels"]
    assert found[labels.MANAGED] == "1" and found[labels.RUN] == "abc123"
    assert {labels.HOST, labels.BOOT, labels.PIDNS, labels.PID, labels.STARTED} <= set(found)
    assert manifest["metadata"]["annotations"] == {
        labels.HOOK: f"{WS}/.clinerules/hooks/PreToolUse"
    }
    # A host name no label may hold becomes "" (its owner then is judged by the deadline).
    monkeypatch.setattr(labels, "here", lambda: ("x" * 70, "boot", "1"))
    found = pod()["metadata"]["labels"]
    assert found[labels.HOST] == ""
    assert all(LABEL_VALUE.fullmatch(v) for v in found.values()), found


@pytest.mark.parametrize("version", VERSIONS)
def test_the_pod_passes_the_strict_schemas(version: str) -> None:
    for manifest in (
        pod(),
        pod(volumes=(HOST,)),
        pod(
            request(private_dirs=(("/data", None),)), settings(runtime_class="gvisor", groups=(7,))
        ),
    ):
        assert validate(manifest, version, strict=True) == version


def test_the_kubernetes_backend_never_imports_docker_code() -> None:
    graph = _imports()
    for name, deps in graph.items():
        if name.startswith("sandboxrun._backends.kubernetes"):
            assert not {d for d in deps if d.startswith("sandboxrun._backends.docker")}, name


PROBE = """
import sys, sandboxrun
from sandboxrun._cli.parser import parser as _parser
_parser()
for name in sandboxrun.__all__:
    getattr(sandboxrun, name)
import sandboxrun._backends.kubernetes.pod
print(sorted(m for m in sys.modules if m == "kubernetes" or m.startswith("kubernetes.")))
"""


def test_nothing_imports_the_kubernetes_client_unless_that_backend_is_chosen() -> None:
    """`import sandboxrun`, every public name, the CLI's parser and the pod spec leave
    the optional client alone (installed here, so its absence from sys.modules counts)."""
    import importlib.util

    assert importlib.util.find_spec("kubernetes") is not None, "pip install -e '.[dev]'"
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True, timeout=60).stdout  # fmt: skip
    assert out.strip() == "[]"
