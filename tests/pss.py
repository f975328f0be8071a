"""The Pod Security Standard `restricted` (baseline included), checked field by field on a
pod spec, as https://kubernetes.io/docs/concepts/security/pod-security-standards/ lists
it (policy version v1.34+). Written by hand: the admission controller that enforces it
lives in the API server, which no machine here runs."""

from __future__ import annotations

from typing import Any

RESTRICTED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret",
}  # fmt: skip
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}


def restricted_violations(
    spec: dict[str, Any], annotations: dict[str, str] | None = None
) -> list[str]:
    """Every rule of `restricted` that the pod spec breaks (empty: it passes)."""
    bad: list[str] = []
    pod_sc = spec.get("securityContext") or {}
    containers = [*spec.get("containers", []), *spec.get("initContainers", []),
                  *spec.get("ephemeralContainers", [])]  # fmt: skip
    # Baseline
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(host):
            bad.append(f"{host} is set")
    if (pod_sc.get("windowsOptions") or {}).get("hostProcess"):
        bad.append("pod hostProcess")
    for volume in spec.get("volumes", []):
        kinds = set(volume) - {"name"}
        if kinds - RESTRICTED_VOLUMES:
            bad.append(f"volume {volume['name']}: type {sorted(kinds)} not allowed")
    for sysctl in pod_sc.get("sysctls", []):
        if sysctl["name"] not in SAFE_SYSCTLS:
            bad.append(f"sysctl {sysctl['name']}")
    for key, value in (annotations or {}).items():
        if key.startswith("container.apparmor.security.beta.kubernetes.io/") and not (
            value == "runtime/default" or value.startswith("localhost/")
        ):
            bad.append(f"AppArmor annotation {key}={value}")
    for where, sc in [
        ("pod", pod_sc),
        *[(c["name"], c.get("securityContext") or {}) for c in containers],
    ]:
        if (sc.get("appArmorProfile") or {}).get("type", "RuntimeDefault") not in (
            "RuntimeDefault",
            "Localhost",
        ):
            bad.append(f"{where}: AppArmor profile")
        selinux = sc.get("seLinuxOptions") or {}
        if (
            selinux.get("type", "") not in SELINUX_TYPES
            or selinux.get("user")
            or selinux.get("role")
        ):
            bad.append(f"{where}: SELinux options")
        if sc.get("runAsUser") == 0:
            bad.append(f"{where}: runAsUser 0")
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            bad.append(f"{where}: seccomp Unconfined")
    for c in containers:
        sc = c.get("securityContext") or {}
        name = c["name"]
        if sc.get("privileged"):
            bad.append(f"{name}: privileged")
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            bad.append(f"{name}: hostProcess")
        if any(p.get("hostPort") for p in c.get("ports", [])):
            bad.append(f"{name}: hostPort")
        if sc.get("procMount", "Default") != "Default":
            bad.append(f"{name}: procMount")
        # Restricted
        if sc.get("allowPrivilegeEscalation") is not False:
            bad.append(f"{name}: allowPrivilegeEscalation is not false")
        non_root = sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
        if non_root is not True:
            bad.append(f"{name}: runAsNonRoot is not true")
        seccomp = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            bad.append(f"{name}: seccompProfile is {seccomp}")
        caps = sc.get("capabilities") or {}
        if "ALL" not in caps.get("drop", []):
            bad.append(f"{name}: capabilities do not drop ALL")
        if set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            bad.append(f"{name}: capabilities add {caps['add']}")
    return bad
