"""What the API server's validation and defaulting do to a pod: on create, refuse what
it would (422 `Invalid` with its causes) and fill in the defaults it adds
(imagePullPolicy, restartPolicy, terminationGracePeriodSeconds, qosClass, status.phase
Pending); on update and patch, keep identity and status, refuse a change of the
immutable spec, and let `activeDeadlineSeconds` only come sooner."""

from __future__ import annotations

import copy
import re
from typing import Any

from .errors import ApiError, invalid
from .store import Pod

_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
# What an update may change in a pod's spec (the rest is immutable).
_MUTABLE_SPEC = ("activeDeadlineSeconds", "tolerations")


def validate_new(pod: Pod) -> None:
    """What the server's validation refuses on create, and the defaults it fills in."""
    if pod.get("kind", "Pod") != "Pod" or pod.get("apiVersion", "v1") != "v1":
        raise ApiError(400, "BadRequest", f"the API version in the data ({pod.get('apiVersion')})"
                       " does not match the expected API version (v1)")  # fmt: skip
    pod.update(kind="Pod", apiVersion="v1")
    meta, spec = pod.setdefault("metadata", {}), pod.setdefault("spec", {})
    name = meta.get("name") or meta.get("generateName") or ""
    causes: list[tuple[str, str, str]] = []
    if not name:
        causes.append(("metadata.name", "FieldValueRequired", "Required value: name or generateName is required"))  # fmt: skip
    elif len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name.rstrip("-") or "x"):
        causes.append(("metadata.name", "FieldValueInvalid",
                       f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of'
                       " lower case alphanumeric characters, '-' or '.', and must start and end"
                       " with an alphanumeric character"))  # fmt: skip
    causes += _label_causes(meta)
    containers = spec.get("containers") or []
    if not containers:
        causes.append(("spec.containers", "FieldValueRequired", "Required value"))
    volumes = {v.get("name") for v in spec.get("volumes") or []}
    for i, c in enumerate(containers):
        where = f"spec.containers[{i}]"
        if not _DNS_LABEL.fullmatch(c.get("name") or ""):
            causes.append(
                (f"{where}.name", "FieldValueInvalid", f'Invalid value: "{c.get("name")}"')
            )
        if not c.get("image"):
            causes.append((f"{where}.image", "FieldValueRequired", "Required value"))
        for j, m in enumerate(c.get("volumeMounts") or []):
            if m.get("name") not in volumes:
                causes.append((f"{where}.volumeMounts[{j}].name", "FieldValueNotFound",
                               f'Not found: "{m.get("name")}"'))  # fmt: skip
    if spec.get("restartPolicy", "Always") not in ("Always", "OnFailure", "Never"):
        causes.append(("spec.restartPolicy", "FieldValueNotSupported",
                       f'Unsupported value: "{spec["restartPolicy"]}"'))  # fmt: skip
    if "activeDeadlineSeconds" in spec and not int(spec["activeDeadlineSeconds"]) > 0:
        causes.append(("spec.activeDeadlineSeconds", "FieldValueInvalid",
                       "Invalid value: must be greater than 0"))  # fmt: skip
    if causes:
        raise invalid(name, causes)
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("securityContext", {})
    for c in containers:
        image = c["image"]
        tag = image.rsplit("/", 1)[-1]
        latest = ":" not in tag or tag.endswith(":latest")
        c.setdefault("imagePullPolicy", "Always" if latest and "@" not in image else "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
    pod["status"] = {"phase": "Pending", "qosClass": _qos(containers)}


def _label_causes(meta: dict[str, Any]) -> list[tuple[str, str, str]]:
    causes = []
    for key, value in (meta.get("labels") or {}).items():
        name = key.rsplit("/", 1)[-1]
        if len(name) > 63 or not _LABEL_NAME.fullmatch(name):
            causes.append(("metadata.labels", "FieldValueInvalid", f'Invalid value: "{key}"'))
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
            causes.append(("metadata.labels", "FieldValueInvalid", f'Invalid value: "{value}"'))
    return causes


def _qos(containers: list[dict[str, Any]]) -> str:
    resources = [c.get("resources") or {} for c in containers]
    if not any(r.get("limits") or r.get("requests") for r in resources):
        return "BestEffort"
    guaranteed = all(
        {"cpu", "memory"} <= set(r.get("limits") or {})
        and all(
            (r.get("requests") or r.get("limits") or {}).get(k) == r["limits"][k]
            for k in ("cpu", "memory")
        )
        for r in resources
    )
    return "Guaranteed" if guaranteed else "Burstable"


def updated(old: Pod, new: Pod) -> Pod:
    """`new` as an update of `old` stores it: identity and status kept from `old`, spec
    changes beyond the mutable fields refused (422), generation bumped on a spec change."""
    new = copy.deepcopy(new)
    meta, old_meta = new.setdefault("metadata", {}), old["metadata"]
    name = old_meta["name"]
    for key in ("name", "namespace", "uid"):
        if meta.get(key, old_meta[key]) != old_meta[key]:
            raise invalid(name, [(f"metadata.{key}", "FieldValueInvalid",
                                  "Invalid value: field is immutable")])  # fmt: skip
    for key in ("name", "namespace", "uid", "creationTimestamp", "generation",
                "deletionTimestamp", "deletionGracePeriodSeconds"):  # fmt: skip
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    causes = _label_causes(meta)
    if causes:
        raise invalid(name, causes)
    spec = new.get("spec", {})
    frozen = lambda s: {k: v for k, v in s.items() if k not in _MUTABLE_SPEC}  # noqa: E731
    old_images = [c["image"] for c in old["spec"]["containers"]]
    changed = copy.deepcopy(spec)
    for c, image in zip(changed.get("containers", []), old_images, strict=False):
        c["image"] = image  # a container's image may change
    if frozen(changed) != frozen(old["spec"]):
        raise invalid(name, [("spec", "FieldValueForbidden",
                              "Forbidden: pod updates may not change fields other than"
                              " `spec.containers[*].image`, `spec.activeDeadlineSeconds`,"
                              " `spec.tolerations` (only additions to existing tolerations),"
                              " `spec.terminationGracePeriodSeconds` (allow it to be set to 1"
                              " if it was previously negative)")])  # fmt: skip
    before, after = old["spec"].get("activeDeadlineSeconds"), spec.get("activeDeadlineSeconds")
    if before is not None and (after is None or int(after) > int(before)):
        # The kubelet's deadline may come sooner, never later: a pod started with a
        # long one (a warm pod) can only have it shortened.
        raise invalid(name, [("spec.activeDeadlineSeconds", "FieldValueInvalid",
                              f"Invalid value: {after}: must be less than or equal to"
                              " previous value")])  # fmt: skip
    if after is not None and not int(after) > 0:
        raise invalid(name, [("spec.activeDeadlineSeconds", "FieldValueInvalid",
                              f"Invalid value: {after}: must be between 1 and 2147483647,"
                              " inclusive")])  # fmt: skip
    if spec != old["spec"]:
        meta["generation"] = old_meta.get("generation", 1) + 1
    new["status"] = copy.deepcopy(old.get("status", {}))
    new["kind"], new["apiVersion"] = "Pod", "v1"
    return new
