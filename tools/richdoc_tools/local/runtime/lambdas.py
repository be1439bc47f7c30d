"""The Lambda service of the embedded stack: invocations run the repository's handlers.

moto runs function code in Docker, which this project cannot assume. Every moto code path
that executes a function reaches ``LambdaRuntime.invoke`` instead (the patch point
``patches.lambda_invoke``), which runs the handler named in template.yaml in-process, with
a Lambda context (memory size from the template, deadline from its timeout) and the Python
runtime's error envelope, so Step Functions sees the same error names as on AWS
(``errorType`` = exception class name; ``Sandbox.Timedout`` when the function outlives its
timeout).

Whether an invocation fails before or while its handler runs (a test's scripted failure,
an injected fault) is asked in one place, ``faults.invocations.InvocationFailures``; errors
raised by handlers come from running the real handlers.

Each handler runs on a thread of its own that acts as the function's execution role
(``requests.callers``: its AWS calls are signed with the role's session, on a strict stack), for
an invocation numbered among the attempts of the same work.

Concurrency, two limits: an invocation beyond a function's reserved concurrency is
throttled at once, as on AWS (``concurrency``: the Invoke API answers HTTP 429
``TooManyRequestsException``, which Step Functions sees as
``Lambda.TooManyRequestsException``); an accepted one then waits for one of this
machine's runners (cores for the image functions, 4 x cores for the others), a limit of
this machine, not AWS's.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import richdoc
from richdoc_tools.local.cloudformation.template import HandlerSource
from richdoc_tools.local.faults.injected import SandboxCrashed
from richdoc_tools.local.faults.invocations import Crash, InvocationFailures
from richdoc_tools.local.faults.scripted import PlatformError
from richdoc_tools.local.requests import callers
from richdoc_tools.local.runtime.concurrency import ReservedConcurrency
from richdoc_tools.local.runtime.sandboxes import Sandboxes

if TYPE_CHECKING:
    from moto.awslambda.models import LambdaFunction
    from types_boto3_lambda import LambdaClient

# Handlers run on threads named like this (the stack routes their output by it).
FUNCTION_THREAD_PREFIX = "lambda-"


@dataclass
class LocalContext:
    """The attributes of the Lambda context object that handlers and Powertools read."""

    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int
    aws_request_id: str
    deadline: float
    function_version: str = "$LATEST"
    log_group_name: str = ""
    log_stream_name: str = ""
    identity: Any = None
    client_context: Any = None

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


@dataclass(frozen=True)
class Invocation:
    """One record of what the platform ran (kept for tests and `richdoc run --verbose`)."""

    logical_id: str
    request_id: str
    memory_mb: int
    started: float
    seconds: float
    error_type: str | None


def error_envelope(
    error_type: str, message: str, request_id: str, stack: list[str] | None = None
) -> str:
    return json.dumps(
        {
            "errorMessage": message,
            "errorType": error_type,
            "requestId": request_id,
            "stackTrace": stack or [],
        }
    )


class LambdaRuntime:
    """Maps emulated functions to handler sources and runs them."""

    def __init__(
        self,
        handlers: Mapping[str, HandlerSource],
        *,
        functions: Mapping[str, str],
        failures: InvocationFailures | None = None,
        timeout_override_s: Mapping[str, float] | None = None,
        on_import: Callable[[], None] | None = None,
        reserved_concurrency: Mapping[str, int] | None = None,
        principals: Mapping[str, callers.Principal] | None = None,
        sandboxes: Sandboxes | None = None,
        sandbox_environment: Mapping[str, str] | None = None,
    ) -> None:
        self.handlers = dict(handlers)  # logical id -> source
        self.functions = dict(functions)  # physical function name -> logical id
        # Another checkout's code (an earlier release's) runs in sandbox processes, with
        # this environment under the function's own (``sandboxes``).
        self.sandboxes = sandboxes
        self.sandbox_environment = dict(sandbox_environment or {})
        # Called on the invoking thread once an invocation has started, before its code
        # runs (its code is the function's as it was when it started): a test holds an
        # invocation there, across a stack update.
        self.on_invoke: Callable[[str, Any], None] | None = None
        # What each invocation meets (scripted failures, injected faults); it also numbers
        # the invocations.
        self.failures = failures or InvocationFailures()
        # Each function's handler acts as its execution role (strict stacks; none: as an
        # operator).
        self.principals = dict(principals or {})
        self.timeout_override_s = dict(timeout_override_s or {})
        self.invocations: list[Invocation] = []
        self._modules: dict[Path, ModuleType] = {}
        self._import_lock = threading.Lock()
        self.on_import = on_import
        # Beyond its reserved concurrency an invocation is throttled, as on AWS.
        self.reserved = ReservedConcurrency(reserved_concurrency or {})
        # AWS runs each invocation in its own sandbox; here they share the machine's cores,
        # so concurrent invocations of a CPU-heavy (image) function wait for a runner
        # instead of all converting at once. Waiting does not count against the timeout.
        cores = os.cpu_count() or 2
        self.runners = {
            logical_id: cores if source.image else 4 * cores
            for logical_id, source in self.handlers.items()
        }
        self._runners = {
            logical_id: threading.BoundedSemaphore(runners)
            for logical_id, runners in self.runners.items()
        }

    def redeploy(
        self,
        handlers: Mapping[str, HandlerSource],
        *,
        functions: Mapping[str, str],
        reserved_concurrency: Mapping[str, int],
        principals: Mapping[str, callers.Principal],
    ) -> None:
        """The functions after a stack update: their code, names, reservations and roles.
        An invocation already running goes on with the code and role it started with."""
        cores = os.cpu_count() or 2
        for logical_id, source in handlers.items():
            if logical_id not in self._runners:
                self.runners[logical_id] = cores if source.image else 4 * cores
                self._runners[logical_id] = threading.BoundedSemaphore(self.runners[logical_id])
        self.handlers = dict(handlers)
        self.functions = dict(functions)
        self.reserved.reserved = dict(reserved_concurrency)
        self.principals = dict(principals)

    # ---- handler loading ---------------------------------------------------------------

    def handler(self, logical_id: str) -> Callable[[Any, Any], Any]:
        source = self.handlers[logical_id]
        path = source.module_path.resolve()
        with self._import_lock:
            module = self._modules.get(path)
            if module is None:
                # One module per file (the three parse tiers share their image's handler),
                # named uniquely so functions/*/app.py do not shadow each other.
                name = "richdoc_lambda_" + "_".join(path.parent.parts[-2:]) + "_" + path.stem
                spec = importlib.util.spec_from_file_location(name, path)
                if spec is None or spec.loader is None:
                    raise ImportError(f"cannot load handler module {path}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module  # pydantic resolves annotations through it
                spec.loader.exec_module(module)
                self._modules[path] = module
                if self.on_import:  # e.g. route the loggers the module just created
                    self.on_import()
        handler: Callable[[Any, Any], Any] = getattr(module, source.function_name)
        return handler

    # ---- invocation --------------------------------------------------------------------

    def invoke(self, fn: LambdaFunction, event: Any) -> tuple[str, bool, str]:
        """Run one invocation as the platform does: ``(payload, errored, logs)``, what
        moto expects of ``LambdaFunction._invoke_lambda``."""
        logical_id = self.functions.get(fn.function_name)
        request_id = str(uuid.uuid4())
        if logical_id is None:
            message = f"function {fn.function_name} is not part of the embedded stack"
            return error_envelope("Lambda.ResourceNotFoundException", message, request_id), True, ""
        if isinstance(event, str | bytes):
            event = json.loads(event or "{}")
        memory_mb = int(fn.memory_size)
        timeout_s = self.timeout_override_s.get(logical_id, float(fn.timeout))
        source = self.handlers[logical_id]  # the code as it is when the invocation starts
        # A throttled invocation never starts: it is not an attempt of its work.
        with self.reserved.invocation(logical_id):
            invocation = self.failures.begin(logical_id, event)
            if self.on_invoke is not None:
                self.on_invoke(logical_id, event)
            with self._runners[logical_id]:
                started = time.monotonic()
                if runs_in_this_process(source):
                    payload, error_type = self._run(
                        fn, logical_id, event, request_id, memory_mb, timeout_s, invocation
                    )
                else:
                    payload, error_type = self._run_in_sandbox(
                        fn, source, event, request_id, memory_mb, timeout_s, invocation
                    )
        self.invocations.append(
            Invocation(
                logical_id, request_id, memory_mb, started, time.monotonic() - started, error_type
            )
        )
        return payload, error_type is not None, ""

    def _run(
        self,
        fn: LambdaFunction,
        logical_id: str,
        event: Any,
        request_id: str,
        memory_mb: int,
        timeout_s: float,
        invocation: callers.Invocation,
    ) -> tuple[str, str | None]:
        answered = threading.Event()  # the handler returned, or its sandbox crashed
        failure = self.failures.before_run(invocation, logical_id, event, wake=answered)
        if isinstance(failure, PlatformError):
            self.failures.end(invocation)  # refused, or lost: the handler never runs
            envelope = error_envelope(failure.error_type, failure.message, request_id)
            return envelope, failure.error_type

        context = LocalContext(
            function_name=fn.function_name,
            invoked_function_arn=fn.function_arn,
            memory_limit_in_mb=memory_mb,
            aws_request_id=request_id,
            deadline=time.monotonic() + timeout_s,
            log_group_name=f"/aws/lambda/{fn.function_name}",
        )
        outcome: dict[str, Any] = {}

        try:
            # Like a cold start: the module is imported on the first invocation; an import
            # failure is the runtime's init error, reported on every invocation.
            handler = self.handler(logical_id)
        except Exception as exc:
            self.failures.end(invocation)
            message = f"Unable to import module '{self.handlers[logical_id].module_path}': {exc}"
            return error_envelope("Runtime.ImportModuleError", message, request_id), (
                "Runtime.ImportModuleError"
            )

        caller = callers.Caller(self.principals.get(logical_id), invocation)

        def run() -> None:
            try:
                with callers.acting_as(caller):
                    outcome["result"] = handler(event, context)
            except Exception as exc:  # the runtime reports every handler exception
                outcome["error"] = exc
            except SandboxCrashed:  # its sandbox is gone: nothing to report
                pass
            finally:
                self.failures.end(invocation)
                answered.set()

        # The handler runs on its own thread so the function timeout can be enforced the
        # way the platform does: the caller gets Sandbox.Timedout at the deadline.
        worker = threading.Thread(
            target=run, name=f"{FUNCTION_THREAD_PREFIX}{logical_id}", daemon=True
        )
        worker.start()
        answered.wait(timeout_s)
        if isinstance(failure, Crash) and answered.is_set():
            failure.happened.set()  # at its k-th call, or as it returns if it made fewer
            crash = failure.error
            return error_envelope(crash.error_type, crash.message, request_id), crash.error_type
        if not answered.is_set():
            stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            message = f"{stamp} {request_id} Task timed out after {timeout_s:.2f} seconds"
            return error_envelope("Sandbox.Timedout", message, request_id), "Sandbox.Timedout"
        if "error" in outcome:
            error: BaseException = outcome["error"]
            name = type(error).__name__
            stack = traceback.format_tb(error.__traceback__)
            return error_envelope(name, str(error), request_id, stack), name
        return json.dumps(outcome.get("result")), None

    def _run_in_sandbox(
        self,
        fn: LambdaFunction,
        source: HandlerSource,
        event: Any,
        request_id: str,
        memory_mb: int,
        timeout_s: float,
        invocation: callers.Invocation,
    ) -> tuple[str, str | None]:
        """Another checkout's code, in a sandbox process (``sandboxes``); a scripted
        failure before it runs as for any invocation (injected crashes are in-process
        only)."""
        assert self.sandboxes is not None, "another checkout's code needs the stack's sandboxes"
        wake = threading.Event()
        failure = self.failures.before_run(invocation, source.logical_id, event, wake=wake)
        try:
            if isinstance(failure, PlatformError):
                envelope = error_envelope(failure.error_type, failure.message, request_id)
                return envelope, failure.error_type
            environment = {
                **self.sandbox_environment,
                **fn.environment_vars,
                **lambda_variables(fn, memory_mb),
                **_credentials(self.principals.get(source.logical_id)),
            }
            context = {
                "function_name": fn.function_name,
                "invoked_function_arn": fn.function_arn,
                "memory_limit_in_mb": memory_mb,
                "aws_request_id": request_id,
                "log_group_name": f"/aws/lambda/{fn.function_name}",
            }
            answer = self.sandboxes.invoke(source, environment, event, context, timeout_s)
        finally:
            self.failures.end(invocation)
        if "errorType" in answer:
            error_type = str(answer["errorType"])
            message = str(answer.get("errorMessage", ""))
            return error_envelope(error_type, message, request_id, answer.get("stackTrace")), (
                error_type
            )
        return json.dumps(answer.get("result")), None


# The layer this process imports its ``richdoc`` from: code of another checkout runs in
# sandboxes.
RUNNING_LAYER = Path(richdoc.__file__).resolve().parents[1]


def runs_in_this_process(source: HandlerSource) -> bool:
    """Whether the code is this process's own (its ``richdoc`` is the one imported)."""
    return source.layer_dir is None or source.layer_dir.resolve() == RUNNING_LAYER


def lambda_variables(fn: LambdaFunction, memory_mb: int) -> dict[str, str]:
    """The variables Lambda sets in every function's environment (the ones the handlers
    and Powertools read)."""
    return {
        "AWS_LAMBDA_FUNCTION_NAME": fn.function_name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{fn.function_name}",
    }


def _credentials(principal: callers.Principal | None) -> dict[str, str]:
    """The execution role's session (strict stacks), as Lambda puts it in the
    environment; none: the environment's own (an operator's, on a lenient stack)."""
    if principal is None:
        return {}
    keys = principal.credentials
    return {
        "AWS_ACCESS_KEY_ID": keys.access_key,
        "AWS_SECRET_ACCESS_KEY": keys.secret_key,
        "AWS_SESSION_TOKEN": keys.token or "",
    }


# ---- what the deployed functions ask of the runtime -------------------------------------


def reserved_concurrency(client: LambdaClient, functions: Mapping[str, str]) -> dict[str, int]:
    """Reserved concurrency by logical id, of the functions (name -> logical id) that set one."""
    reserved = {}
    for name, logical_id in functions.items():
        value = client.get_function_concurrency(FunctionName=name).get(
            "ReservedConcurrentExecutions"
        )
        if value is not None:
            reserved[logical_id] = int(value)
    return reserved


def shared_environment(client: LambdaClient, functions: Mapping[str, str]) -> dict[str, str]:
    """Every function's template environment, merged for the in-process handlers.

    Handlers share one process, so the variables must agree across functions (the
    template keeps per-function differences out of the environment: memory comes from the
    context, the tier from the state machine); a conflict is a ``ValueError``.
    """
    merged: dict[str, str] = {}
    for name, logical_id in functions.items():
        variables = (
            client.get_function_configuration(FunctionName=name)
            .get("Environment", {})
            .get("Variables", {})
        )
        for key, value in variables.items():
            if key in merged and merged[key] != value:
                raise ValueError(
                    f"{logical_id}: environment {key}={value!r} conflicts with "
                    f"{merged[key]!r} of another function"
                )
            merged[key] = value
    return merged
