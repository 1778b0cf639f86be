"""The exceptions of the shardplan client: one class per cause a user can meet.

Every exception derives from ShardplanError and carries the gRPC status code (when the daemon
answered) and the daemon's own message, so that `str(e)` names the cause and what to do.
"""
from __future__ import annotations

from typing import Optional


class ShardplanError(Exception):
    """Base class. `code` is the gRPC status name ("INVALID_ARGUMENT") or None."""

    def __init__(self, message: str, code: Optional[str] = None, details: str = ""):
        super().__init__(message)
        self.code = code
        self.details = details


class BadAddress(ShardplanError, ValueError):
    """The address is not host:port, or its host name does not resolve."""


class DaemonUnavailable(ShardplanError, ConnectionError):
    """Nothing answers at the address (no daemon running, wrong port, or it went away)."""


class AuthenticationError(ShardplanError, PermissionError):
    """The daemon wants a bearer token and the one sent is missing or wrong."""


class ModuleRejected(ShardplanError, ValueError):
    """The daemon refused the module or an option (INVALID_ARGUMENT); the message says what and
    where (file:line:col)."""


class PlanNotFound(ShardplanError, KeyError):
    """No plan with that key in the daemon's cache."""

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0] if self.args else ""


class RequestTooLarge(ShardplanError):
    """The request is over the daemon's message size limit (RESOURCE_EXHAUSTED)."""


class ServerBusy(ShardplanError):
    """The daemon's search queue is full; retry after `retry_after_ms`."""

    retry_after_ms: Optional[int] = None


class DeadlineExceeded(ShardplanError, TimeoutError):
    """No valid plan within the call's deadline."""


class PlanningFailed(ShardplanError, RuntimeError):
    """The planner failed for another reason (INTERNAL, or the local planner's exit status)."""
