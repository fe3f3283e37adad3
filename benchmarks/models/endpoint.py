"""Where a model is served, what can go wrong talking to it, and which failures are worth a retry.

Kept apart from the HTTP machinery (`benchmarks.models.base`) because these are decisions, not
transport: a wrong configuration fails at once and says what is wrong (`ModelConfigError`,
never retried), a flaky server is retried with backoff and jitter (429 with its Retry-After,
5xx, timeouts, resets) and only then `ModelUnavailableError`.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from dataclasses import dataclass, field

__all__ = [
    "CONFIG_STATUSES",
    "RETRY_AFTER_CAP_S",
    "RETRY_STATUSES",
    "UNREACHED_BACKOFF_S",
    "UNREACHED_RETRIES",
    "Endpoint",
    "ModelConfigError",
    "ModelError",
    "ModelUnavailableError",
    "backoff_delay",
    "retry_after_s",
]

# Statuses that mean "you asked wrongly": retrying cannot help.
CONFIG_STATUSES = frozenset({400, 401, 403, 404, 405, 413, 422})
RETRY_STATUSES = frozenset({408, 409, 425, 429})  # plus every 5xx
# An endpoint that has never answered gets this many quick retries on a refused connection:
# nothing listening is a configuration problem, not a transient one.
UNREACHED_RETRIES = 2
# A 429's Retry-After is obeyed even beyond backoff_max_s, up to this (a server asking for an
# hour is treated as asking for a minute, then asked again).
RETRY_AFTER_CAP_S = 60.0
UNREACHED_BACKOFF_S = 0.25


class ModelError(RuntimeError):
    """Base of every model-access error."""


class ModelConfigError(ModelError):
    """Wrong configuration (URL, model name, key, request): fix the config; never retried."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ModelUnavailableError(ModelError):
    """The server could not be reached or kept failing after all retries."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a model is served and how to talk to it.

    Only `model` and `revision` are semantic (they enter cache keys); the rest is operational
    and can change between runs without invalidating cached responses. Clients of one
    `base_url` share a connection pool and a semaphore, sized by the first one to connect.
    """

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    revision: str | None = None
    concurrency: int = 20
    timeout_s: float = 120.0
    connect_timeout_s: float = 5.0
    max_retries: int = 6
    backoff_s: float = 0.5
    backoff_max_s: float = 30.0
    # What widens the server's context window, for the error a too-long prompt gets: the caller
    # that started or configured the server knows (the runner names its config key)
    window_hint: str = (
        "start the server with a larger one (--max-model-len for vLLM, -c for llama-server)"
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if _USERINFO.search(self.base_url):  # a key goes in api_key_env, never in the URL
            shown = _USERINFO.sub(r"\g<scheme><redacted>@", self.base_url)
            raise ModelConfigError(
                f"{shown}: a base URL carries no credentials; give the key through the "
                "profile's api_key_env (an environment variable), which no file records"
            )
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, not {self.concurrency}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, not {self.max_retries}")

    @property
    def root_url(self) -> str:
        """The server root (base URL without "/v1"): where /tokenize and /health live."""
        url = self.base_url
        return url[: -len("/v1")] if url.endswith("/v1") else url


_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)


def backoff_delay(attempt: int, base_s: float, max_s: float) -> float:
    """Exponential backoff with jitter (half fixed, half random), so clients don't stampede."""
    delay = min(max_s, base_s * (2**attempt))
    return delay * (0.5 + 0.5 * random.random())


def retry_after_s(value: str | None) -> float | None:
    """Seconds from a Retry-After header (seconds, fractional accepted, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
