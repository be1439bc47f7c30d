"""One Lambda sandbox: a process that runs one function's handler, one invocation at a time.

Run as a script by ``sandboxes.Sandboxes``, never imported: its ``PYTHONPATH`` is the
release's own code (its ``layers/docling`` and the function's folder), and nothing of this
checkout's packages may be imported here. It reads one request per line from the file
descriptor named first on its command line (the handler's module path and function name
come second and third): ``{"event": ..., "context": {...}}``; runs the handler with a
context like Lambda's; and writes one answer per line to the descriptor named after it:
``{"result": ...}`` or Lambda's error envelope (``errorType``, ``errorMessage``,
``stackTrace``). The handler's own output goes to the process's stdout and stderr.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Context:
    """The attributes of the Lambda context object that handlers and Powertools read (as
    ``lambdas.LocalContext`` has them: that module is this checkout's, not importable
    here)."""

    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    aws_request_id: str
    log_group_name: str
    deadline: float
    function_version: str = "$LATEST"
    log_stream_name: str = ""
    identity: Any = None
    client_context: Any = None

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


# A handler: the event (JSON of whatever shape its source sends) and the context; what it
# returns goes back as JSON.
Handler = Callable[[Any, Context], object]


def _handler(path: str, function: str) -> Handler:
    spec = importlib.util.spec_from_file_location("lambda_function_" + function, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load handler module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves annotations through it
    spec.loader.exec_module(module)
    handler: Handler = getattr(module, function)
    return handler


def _answer(request: dict[str, Any], handler: Handler) -> dict[str, Any]:
    given = request["context"]
    context = Context(
        function_name=given["function_name"],
        invoked_function_arn=given["invoked_function_arn"],
        memory_limit_in_mb=given["memory_limit_in_mb"],
        aws_request_id=given["aws_request_id"],
        log_group_name=given["log_group_name"],
        deadline=time.monotonic() + given["remaining_ms"] / 1000,
    )
    try:
        return {"result": handler(request["event"], context)}
    except Exception as exc:  # the runtime reports every handler exception
        return {
            "errorType": type(exc).__name__,
            "errorMessage": str(exc),
            "stackTrace": traceback.format_tb(exc.__traceback__),
        }


def main(requests_fd: int, answers_fd: int, module_path: str, function: str) -> None:
    with os.fdopen(requests_fd, "r") as requests, os.fdopen(answers_fd, "w") as answers:
        try:
            handler = _handler(module_path, function)
        except Exception as exc:  # Lambda's init error, reported on every invocation
            failure = {
                "errorType": "Runtime.ImportModuleError",
                "errorMessage": f"Unable to import module '{module_path}': {exc}",
                "stackTrace": traceback.format_tb(exc.__traceback__),
            }
            handler = None
        for line in requests:
            answer = failure if handler is None else _answer(json.loads(line), handler)
            answers.write(json.dumps(answer, default=str) + "\n")
            answers.flush()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
