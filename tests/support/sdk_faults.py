"""Make one call of a real boto3 client fail, as the SDK fails once its own retries are
spent: the error is raised from the call itself (botocore's ``before-call`` event), so it
reaches richdoc exactly as a throttled or unreachable service would."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from botocore.exceptions import ClientError, EndpointConnectionError


def client_error(code: str, operation: str, status: int = 400) -> ClientError:
    response: Any = {
        "Error": {"Code": code, "Message": f"{code} (injected)"},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    return ClientError(response, operation)


def connection_error(service: str) -> EndpointConnectionError:
    return EndpointConnectionError(endpoint_url=f"https://{service}.us-east-1.amazonaws.com/")


@contextmanager
def failing(
    client: Any,
    operation: str,
    error: Exception,
    *,
    times: int = 1,
    when: Callable[[Mapping[str, Any]], bool] = lambda params: True,
) -> Iterator[list[Mapping[str, Any]]]:
    """Within the block, the next ``times`` calls of ``operation`` (e.g. "UpdateItem")
    whose API parameters satisfy ``when`` raise ``error``. Yields the parameters of the
    calls it failed."""
    service = client.meta.service_model.service_id.hyphenize()
    event = f"before-parameter-build.{service}.{operation}"
    failed: list[Mapping[str, Any]] = []
    lock = threading.Lock()

    def fail(params: Mapping[str, Any], **_: Any) -> None:
        with lock:
            if len(failed) >= times or not when(params):
                return
            failed.append(dict(params))
        raise error

    client.meta.events.register_first(event, fail)
    try:
        yield failed
    finally:
        client.meta.events.unregister(event, fail)
