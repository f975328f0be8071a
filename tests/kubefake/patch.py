"""The three patch types of PATCH on a pod, as the API server applies them:

- `application/merge-patch+json` (RFC 7386): maps merge, `null` removes a key, a list
  replaces the list;
- `application/strategic-merge-patch+json` (the official client's default for a dict
  body): the same for maps, but a list of objects with a patch merge key (containers and
  volumes by `name`, conditions by `type`, ownerReferences by `uid`, ...) merges element
  by element, and `$patch: delete` in an element removes it. No `$retainKeys` or
  `$setElementOrder` (the backend sends neither);
- `application/json-patch+json` (RFC 6902): `add`, `remove`, `replace`, `test` (a failed
  `test` or a missing path is 422, as the server answers), `move`, `copy`.
"""

from __future__ import annotations

import copy
from typing import Any

from .errors import ApiError

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"

# The patch merge keys of the pod's lists of objects (`patchMergeKey` in the API types).
_MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "volumes": "name", "volumeMounts": "mountPath", "env": "name", "ports": "containerPort",
    "conditions": "type", "ownerReferences": "uid", "imagePullSecrets": "name",
    "hostAliases": "ip", "resourceClaims": "name", "containerStatuses": "name",
}  # fmt: skip


def apply(content_type: str, target: dict[str, Any], patch: Any) -> dict[str, Any]:
    kind = content_type.split(";")[0].strip()
    if kind == JSON_PATCH:
        if not isinstance(patch, list):
            raise _bad("json patch must be a list of operations")
        return _json_patch(copy.deepcopy(target), patch)
    if not isinstance(patch, dict):
        raise _bad("patch must be a JSON object")
    if kind == MERGE:
        return _merge(target, patch, strategic=False, key=None)
    if kind == STRATEGIC:
        return _merge(target, patch, strategic=True, key=None)
    raise ApiError(415, "UnsupportedMediaType",
                   f'the body of the request was in an unknown format - accepted media types'
                   f' include: {JSON_PATCH}, {MERGE}, {STRATEGIC}')  # fmt: skip


def _merge(target: Any, patch: Any, *, strategic: bool, key: str | None) -> Any:
    if not isinstance(patch, dict):
        if (
            strategic
            and isinstance(patch, list)
            and isinstance(target, list)
            and key in _MERGE_KEYS
        ):
            return _merge_list(target, patch, _MERGE_KEYS[key])
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = _merge(result.get(k), v, strategic=strategic, key=k)
    return result


def _merge_list(target: list[Any], patch: list[Any], merge_key: str) -> list[Any]:
    result = copy.deepcopy(target)
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            raise _bad(f"map: {item} does not contain declared merge key: {merge_key}")
        index = next((i for i, t in enumerate(result) if t.get(merge_key) == item[merge_key]), None)
        if item.get("$patch") == "delete":
            if index is not None:
                del result[index]
        elif index is None:
            result.append(copy.deepcopy(item))
        else:
            result[index] = _merge(result[index], item, strategic=True, key=None)
    return result


def _json_patch(doc: Any, ops: list[Any]) -> Any:
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise _bad(f"invalid json patch operation: {op}")
        name, path = op["op"], _pointer(op["path"])
        if name == "test":
            if _get(doc, path) != op.get("value"):
                raise _invalid(f"testing value {op['path']} failed")
        elif name == "remove":
            _remove(doc, path)
        elif name in ("add", "replace"):
            if name == "replace":
                _get(doc, path)
            doc = _add(doc, path, copy.deepcopy(op.get("value")), replace=name == "replace")
        elif name in ("move", "copy"):
            source = _pointer(op.get("from", ""))
            value = copy.deepcopy(_get(doc, source))
            if name == "move":
                _remove(doc, source)
            doc = _add(doc, path, value, replace=False)
        else:
            raise _bad(f"unexpected kind of json patch operation: {name}")
    return doc


def _pointer(text: str) -> list[str]:
    if text == "":
        return []
    if not text.startswith("/"):
        raise _bad(f"invalid json pointer: {text!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in text[1:].split("/")]


def _parent(doc: Any, path: list[str]) -> Any:
    return _get(doc, path[:-1])


def _get(doc: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(doc, dict) and part in doc:
            doc = doc[part]
        elif isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        else:
            raise _invalid(f"doc is missing path: /{'/'.join(path)}")
    return doc


def _add(doc: Any, path: list[str], value: Any, *, replace: bool) -> Any:
    if not path:
        return value
    parent, last = _parent(doc, path), path[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            if replace:
                parent[int(last)] = value
            else:
                parent.insert(int(last), value)
        else:
            raise _invalid(f"doc is missing path: /{'/'.join(path)}")
    else:
        raise _invalid(f"doc is missing path: /{'/'.join(path)}")
    return doc


def _remove(doc: Any, path: list[str]) -> None:
    _get(doc, path)
    parent, last = _parent(doc, path), path[-1]
    if isinstance(parent, dict):
        del parent[last]
    else:
        del parent[int(last)]


def _bad(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def _invalid(message: str) -> ApiError:
    return ApiError(422, "Invalid",
                    f"the server rejected our request due to an error in our request: {message}")  # fmt: skip
