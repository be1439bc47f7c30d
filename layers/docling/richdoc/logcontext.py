"""Per-invocation log keys: Powertools' ``inject_lambda_context``, kept to the invocation.

``Logger.inject_lambda_context`` and ``append_keys`` write the correlation id and the
Lambda context into the logger's formatter, which every thread of the process shares. On
AWS that is one invocation at a time per process; on the embedded stack concurrent
invocations are threads of one process, and a line could carry another job's correlation
id. Powertools' thread-safe keys live in a context variable instead: here they hold the
invocation's keys (cleared at its start and end, so a warm sandbox never carries the
previous invocation's), and handlers add their own keys with
``logger.thread_safe_append_keys``. The lines look exactly as with
``inject_lambda_context``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.lambda_context import build_lambda_context_model
from aws_lambda_powertools.utilities import jmespath_utils

P = ParamSpec("P")
R = TypeVar("R")
ContextT = TypeVar("ContextT")
# A handler: the event (JSON of whatever shape its source sends) and the Lambda context.
Handler = Callable[Concatenate[dict[str, Any], ContextT, P], R]


def log_invocation(
    logger: Logger, *, correlation_id_path: str | None = None
) -> Callable[[Handler[ContextT, P, R]], Handler[ContextT, P, R]]:
    """Decorate a handler so each invocation's log lines carry its own context keys
    (``cold_start``, ``function_*``, and ``correlation_id`` found at the JMESPath
    ``correlation_id_path`` of the event)."""
    cold = {"start": True}
    lock = threading.Lock()

    def decorate(handler: Handler[ContextT, P, R]) -> Handler[ContextT, P, R]:
        @functools.wraps(handler)
        def wrapper(
            event: dict[str, Any], context: ContextT, /, *args: P.args, **kwargs: P.kwargs
        ) -> R:
            with lock:
                cold_start, cold["start"] = cold["start"], False
            keys: dict[str, Any] = {
                "cold_start": cold_start,
                **build_lambda_context_model(context).__dict__,
            }
            if correlation_id_path:
                keys["correlation_id"] = jmespath_utils.query(
                    envelope=correlation_id_path, data=event
                )
            logger.thread_safe_clear_keys()
            logger.thread_safe_append_keys(**keys)
            try:
                return handler(event, context, *args, **kwargs)
            finally:
                logger.thread_safe_clear_keys()

        return wrapper

    return decorate
