"""The API server's errors as it writes them: a `v1 Status` body with the HTTP code, the
reason and the message the real server gives, so the official client raises the same
`ApiException` (status, reason, body) the backend will meet on a cluster."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An answer other than success, carried up to the handler that writes it."""

    def __init__(self, code: int, reason: str, message: str,
                 details: dict[str, Any] | None = None) -> None:  # fmt: skip
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message, "reason": self.reason, "code": self.code,
        }  # fmt: skip
        if self.details is not None:
            body["details"] = self.details
        return body


def not_found(kind: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{kind} "{name}" not found', {"name": name, "kind": kind})


def conflict(name: str) -> ApiError:
    return ApiError(
        409, "Conflict",
        f'Operation cannot be fulfilled on pods "{name}": the object has been modified;'
        " please apply your changes to the latest version and try again",
        {"name": name, "kind": "pods"},
    )  # fmt: skip


def invalid(name: str, causes: list[tuple[str, str, str]]) -> ApiError:
    """422 for `causes` of (field, reason as FieldValue*, message)."""
    text = ", ".join(f"{f}: {m}" for f, _, m in causes)
    return ApiError(
        422, "Invalid", f'Pod "{name}" is invalid: {text}',
        {"name": name, "kind": "Pod",
         "causes": [{"reason": r, "message": m, "field": f} for f, r, m in causes]},
    )  # fmt: skip


def gone(rv: int, oldest: int) -> ApiError:
    return ApiError(410, "Expired", f"too old resource version: {rv} ({oldest})")


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(
    user: str, verb: str, resource: str, namespace: str | None, name: str = ""
) -> ApiError:
    kind = resource.split("/", 1)[0]
    what = f'{kind} "{name}"' if name else kind
    where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
    return ApiError(
        403, "Forbidden",
        f'{what} is forbidden: User "{user}" cannot {verb} resource "{resource}"'
        f' in API group ""{where}',
        {"name": name, "kind": kind} if name else {"kind": kind},
    )  # fmt: skip
