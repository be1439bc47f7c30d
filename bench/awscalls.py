"""Count the AWS API calls the pipeline makes, by caller, service and operation.

Every boto3 call (clients and resources alike) goes through
``botocore.client.BaseClient._make_api_call``; while installed, a wrapper counts each call
under the kind of thread that made it. In the embedded stack the kinds are:

* ``function:<LogicalId>``: Lambda handlers (threads named ``lambda-<LogicalId>``):
  what the functions call, which is what AWS bills as S3, DynamoDB and SQS requests;
* ``state-machine``: moto's Step Functions interpreter (its Lambda invocations and
  service integrations);
* ``event-source``: the SQS poller standing in for Lambda's event source mapping, and
  the execution-status event loop;
* ``client``: this process's own calls (uploads, waiting for the jobs).

DynamoDB writes are also split by the item they touch (the job item or an attempt
item), since write units depend on item size.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from richdoc_tools.local.runtime.lambdas import FUNCTION_THREAD_PREFIX

from richdoc.jobs.keys import JOB_SK

_DYNAMO_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem"})


def thread_kind(name: str) -> str:
    if name.startswith(FUNCTION_THREAD_PREFIX):
        return "function:" + name[len(FUNCTION_THREAD_PREFIX) :]
    if name.startswith(("sqs-poller", "sfn-status-events")):
        return "event-source"
    if name == "MainThread":
        return "client"
    return "state-machine"


def _dynamo_target(params: dict[str, Any]) -> str:
    key = params.get("Key") or params.get("Item") or {}
    sort_key = key.get("sk", {})
    value = sort_key.get("S") if isinstance(sort_key, dict) else sort_key
    return "job item" if value == JOB_SK else "attempt item"


class ApiCounter:
    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str, str]] = Counter()
        self.dynamo_writes: Counter[tuple[str, str]] = Counter()  # (thread kind, item)
        self._lock = threading.Lock()
        self._original: Callable[..., Any] | None = None

    def install(self) -> None:
        from botocore.client import BaseClient

        if self._original is not None:
            return
        # A private botocore method: every API call of every client passes through it.
        original = BaseClient._make_api_call  # type: ignore[attr-defined]
        counter = self

        def counted(client: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
            kind = thread_kind(threading.current_thread().name)
            service = client.meta.service_model.service_name
            with counter._lock:
                counter.calls[(kind, service, operation_name)] += 1
                if service == "dynamodb" and operation_name in _DYNAMO_WRITES:
                    counter.dynamo_writes[(kind, _dynamo_target(api_params))] += 1
            return original(client, operation_name, api_params)

        self._original = original
        BaseClient._make_api_call = counted  # type: ignore[attr-defined]

    def uninstall(self) -> None:
        from botocore.client import BaseClient

        if self._original is not None:
            BaseClient._make_api_call = self._original  # type: ignore[attr-defined]
            self._original = None

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.dynamo_writes.clear()

    def snapshot(self) -> dict[str, dict[str, int]]:
        """``{thread kind: {"service:Operation": count}}``."""
        out: dict[str, dict[str, int]] = {}
        with self._lock:
            for (kind, service, operation), count in sorted(self.calls.items()):
                out.setdefault(kind, {})[f"{service}:{operation}"] = count
        return out
