"""The embedded stack: template.yaml deployed into an in-process AWS emulation (moto).

It runs the real state machine definition with moto's Amazon States Language
interpreter, the real handlers (see ``lambdas``), the S3 -> SQS notification, the SQS
event source with partial batch failures and the dead-letter redrive policy (see
``events``). ``richdoc run``, ``richdoc local serve`` and the end-to-end tests use it.

Two modes: in-process (``mock_aws``; boto3 in this process talks to the emulation) and
server (moto's WSGI application on 127.0.0.1, so the AWS CLI and other processes can use
``--endpoint-url``). Both install the same Lambda dispatcher and event loops.

Everything the stack changes in the process (the caller's AWS environment, moto and
Powertools internals, standard streams, logger levels) is changed through one
``contextlib.ExitStack`` of ``unittest.mock`` patches and undone by ``stop``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import os
import pkgutil
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any
from unittest import mock

import boto3

from richdoc.jobs import Job, JobStore, job_id_for
from richdoc_tools.local.clients import Clients
from richdoc_tools.local.deploy import Deployment
from richdoc_tools.local.events import (
    AsyncInvoker,
    ExecutionStatusEvents,
    ScheduledRules,
    SqsPoller,
)
from richdoc_tools.local.lambdas import FaultPlan, LambdaRuntime
from richdoc_tools.local.output import FunctionLog
from richdoc_tools.local.provisioners import NotEmulated
from richdoc_tools.local.template import Template, load_template

REGION = "us-east-1"
ACCOUNT = "123456789012"
DEFAULT_STACK_NAME = "richdoc"

# moto internals the stack relies on besides the Lambda dispatcher (see lambdas.PATCH_TARGET);
# each has a canary test in tests/test_local_stack.py.
RETRY_SLEEP_TARGET = "moto.stepfunctions.parser.asl.component.common.retry.retrier_decl.time"
# moto parses the definition with ANTLR again for every execution: most of the
# interpreter's CPU per job (bench/, item 5). The parse tree is read-only, so it is kept per
# definition; each execution still gets fresh evaluation components built from it.
ASL_PARSE_TARGET = "moto.stepfunctions.parser.asl.parse.asl_parser.AmazonStateLanguageParser.parse"
# moto builds a new boto3 client for every Lambda task. Its arguments are fixed (moto's
# own dummy credentials, the task's region), and clients are thread-safe, so one client
# per region serves every task.
LAMBDA_TASK_CLIENT_TARGET = (
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.lambda_eval_utils"
    ".boto_client_for"
)
# moto's S3 event notifications leave out the object's versionId, which AWS sends for a
# versioned bucket. The starter would then head the key's latest version, and two quick
# uploads to one key would become one job: each record gets its object's version id.
S3_NOTIFICATION_TARGET = "moto.s3.notifications._get_s3_event"
# On AWS each invocation has its own process; here concurrent invocations are threads of
# one process, and three pieces of shared state raced under load (bench/, item 5: a
# burst of 200 uploads dead-lettered valid documents as internal failures, or crashed
# richdoc run). Each is made safe here, for the stack's life only:
# moto's DynamoDB backend mutates items in place and serializes them without a lock
# ("dictionary changed size during iteration"): every emulated request runs under one lock;
DYNAMODB_DISPATCH_TARGET = "moto.dynamodb.responses.DynamoHandler.call_action"
# a boto3 DynamoDB resource numbers expression placeholders with one builder per client,
# shared by every thread using the resource ("Query condition missed key schema
# element"): each call gets its own builder;
CONDITION_BUILDER_TARGET = (
    "boto3.dynamodb.transform.TransformationInjector.inject_condition_expressions"
)
# Powertools keeps one metric set per process, flushed by whichever invocation ends
# first ("Must contain at least one metric"): its provider's methods run under one lock.
METRICS_PROVIDER_TARGET = (
    "aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch.AmazonCloudWatchEMFProvider"
)
METRICS_METHODS = (
    "add_metric",
    "add_dimension",
    "add_metadata",
    "serialize_metric_set",
    "flush_metrics",
    "clear_metrics",
)
# The server mode serves moto's own WSGI application (as moto's ThreadedMotoServer does) on
# a socket bound here, so a port in use is an error at once rather than a dead thread.
SERVER_APP_TARGET = "moto.moto_server.werkzeug_app"
# The fault hook for SQS (FaultPlan.fail_sends): every SendMessage request, from the state
# machine's sqs:sendMessage task or a handler's boto3 client, reaches this backend method.
# (Messages SQS itself moves to a dead-letter queue by a redrive policy do not.)
SQS_SEND_TARGET = "moto.sqs.models.SQSBackend.send_message"

# The stack never sees the caller's AWS settings: every AWS_* variable is removed for its
# life (an AWS_ENDPOINT_URL or AWS_PROFILE of the shell would send the emulation's own
# calls elsewhere), the config and credentials files are empty, and these are set.
_LOCAL_ENVIRONMENT = {
    # No credentials or network needed: everything is emulated in this process.
    "AWS_ACCESS_KEY_ID": "richdoc-local",
    "AWS_SECRET_ACCESS_KEY": "richdoc-local",
    "AWS_SESSION_TOKEN": "richdoc-local",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    # No X-Ray daemon locally. (Metrics stay on: their EMF lines go to the function log.)
    "POWERTOOLS_TRACE_DISABLED": "true",
}


class StackError(RuntimeError):
    """The embedded stack cannot start or keep running."""


class PortInUse(StackError):
    pass


class EventLoopFailed(StackError):
    """An emulated event delivery (SQS poller, status events) raised: jobs would wait forever."""

    def __init__(self, errors: list[BaseException]) -> None:
        self.errors = errors
        described = "; ".join(f"{type(e).__name__}: {e}" for e in errors[:5])
        super().__init__(f"the emulation's event loops failed: {described}")


@dataclass(frozen=True)
class Upload:
    bucket: str
    key: str
    version_id: str | None
    job_id: str


def _owner(target: str) -> tuple[Any, str]:
    """``"package.module.Class.attribute"`` -> (the class or module, "attribute")."""
    owner, _, attribute = target.rpartition(".")
    return pkgutil.resolve_name(owner), attribute


def _locked(original: Callable[..., Any], lock: Any) -> Callable[..., Any]:
    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return original(*args, **kwargs)

    return call


def _with_version_id(original: Callable[..., Any]) -> Callable[..., Any]:
    """moto's notification builder, with each record's ``s3.object.versionId`` as on AWS."""

    @functools.wraps(original)
    def build(event_name: str, bucket: Any, key: Any, notification_id: str) -> Any:
        event = original(event_name, bucket, key, notification_id)
        version = getattr(key, "version_id", None)
        if version and version != "null":  # unversioned buckets send none
            for record in event["Records"]:
                record["s3"]["object"].setdefault("versionId", version)
        return event

    return build


def _with_own_condition_builder(original: Callable[..., Any]) -> Callable[..., Any]:
    from boto3.dynamodb.conditions import ConditionExpressionBuilder

    @functools.wraps(original)
    def inject(injector: Any, *args: Any, **kwargs: Any) -> Any:
        own = copy.copy(injector)
        own._condition_builder = ConditionExpressionBuilder()
        return original(own, *args, **kwargs)

    return inject


class _ScaledSleep:
    """Stands in for the ``time`` module inside moto's retrier: Retry intervals scaled."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds * self.scale)


class _DefinitionParses:
    """Stands in for moto's ``AmazonStateLanguageParser.parse``: ANTLR parses each
    definition once; every call still builds fresh components from the tree (moto's
    ``Preprocessor``), so executions share nothing mutable."""

    def __init__(self, original: Any) -> None:
        self.original = original
        self.trees: dict[str, Any] = {}
        self.lock = threading.Lock()

    def __call__(self, definition: str) -> tuple[Any, Any]:
        from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

        tree = self.trees.get(definition)
        if tree is None:
            program, tree = self.original(definition)  # raises on an invalid definition
            with self.lock:
                self.trees.setdefault(definition, tree)
            return program, tree
        return Preprocessor().visit(tree), tree


class _TaskClients:
    """Stands in for moto's ``boto_client_for`` in Lambda tasks: one client per region
    and service (moto ignores the state's credentials and always passes its own)."""

    def __init__(self, original: Any) -> None:
        self.original = original
        self.clients: dict[tuple[str, str], Any] = {}
        self.lock = threading.Lock()

    def __call__(self, region: str, service: str, state_credentials: Any = None) -> Any:
        key = (region, service)
        with self.lock:
            client = self.clients.get(key)
            if client is None:
                client = self.clients[key] = self.original(
                    region=region, service=service, state_credentials=state_credentials
                )
        return client


class EmbeddedStack:
    def __init__(
        self,
        *,
        root: Path | None = None,
        stack_name: str = DEFAULT_STACK_NAME,
        parameters: Mapping[str, str] | None = None,
        retry_delay_scale: float = 0.01,
        retry_visibility_s: int = 1,
        faults: FaultPlan | None = None,
        timeout_override_s: Mapping[str, float] | None = None,
        log_path: Path | None = None,
        capture_process_output: bool = False,
        server_port: int | None = None,
        schedules: bool = True,
    ) -> None:
        """``log_path``: function output goes there (see ``output.FunctionLog``);
        ``capture_process_output``: descriptor-level output too (for a command line, never
        under pytest's own capture); ``server_port``: serve on 127.0.0.1 (0 picks a free
        port)."""
        self.root = root
        self.stack_name = stack_name
        self.parameters = dict(parameters or {})
        self.retry_delay_scale = retry_delay_scale
        self.retry_visibility_s = retry_visibility_s
        self.faults = faults or FaultPlan()
        self.timeout_override_s = dict(timeout_override_s or {})
        self.log_path = log_path
        self.capture_process_output = capture_process_output
        self.server_port = server_port
        # Scheduled rules fire on their own schedule (the sweep: every SweepIntervalMinutes);
        # with False only fire_schedules() fires them (tests choose when, and the time).
        self.schedules = schedules
        self.template: Template | None = None
        self.outputs: dict[str, str] = {}
        self.not_emulated: list[NotEmulated] = []
        self.runtime: LambdaRuntime | None = None
        self._exit: contextlib.ExitStack | None = None
        self._loops: list[Any] = []
        self._clients: Clients | None = None
        self._local = threading.local()
        self._schedule_rules: ScheduledRules | None = None
        self._queues: dict[str, str] = {}  # queue name -> logical id (for send faults)

    # ---- lifecycle ---------------------------------------------------------------------

    def __enter__(self) -> EmbeddedStack:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def endpoint_url(self) -> str | None:
        return f"http://127.0.0.1:{self.server_port}" if self.server_port is not None else None

    def start(self) -> None:
        self._exit = contextlib.ExitStack()
        try:
            self._start(self._exit)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        exit_stack, self._exit = self._exit, None
        if exit_stack is not None:
            exit_stack.close()

    def _start(self, exit_stack: contextlib.ExitStack) -> None:
        self._isolate_environment(exit_stack)  # first: moto makes boto3 sessions on import
        self.template = load_template(self.root, account=ACCOUNT, region=REGION)
        config: Any = {
            "stepfunctions": {"execute_state_machine": True},
            "iam": {"load_aws_managed_policies": True},
        }
        if self.server_port is not None:
            self._serve(exit_stack, config)
        else:
            from moto import mock_aws

            exit_stack.enter_context(mock_aws(config=config))
        self._quiet_loggers(exit_stack)
        self._patch_moto(exit_stack)
        self._make_concurrency_safe(exit_stack)
        exit_stack.callback(self._forget_clients)

        self._clients = Clients(
            boto3.Session(region_name=REGION), region=REGION, endpoint_url=self.endpoint_url
        )
        deployment = Deployment(
            self._clients,
            self.template,
            stack_name=self.stack_name,
            region=REGION,
            account=ACCOUNT,
            parameters=self.parameters,
        )
        deployed = deployment.deploy()
        self.outputs = deployment.outputs()
        self.not_emulated = list(deployment.not_emulated)
        deployment.publish(self.outputs)

        functions = {
            deployed.refs[lid]: lid
            for lid, kind in deployed.types.items()
            if kind == "AWS::Lambda::Function"
        }
        self._apply_function_environment(functions)
        function_log = None
        if self.log_path is not None:
            # Before any handler module is imported (see output.FunctionLog).
            function_log = FunctionLog(
                self.log_path, capture_descriptors=self.capture_process_output
            )
            function_log.open(exit_stack)
        self._queues = {
            deployed.attributes[lid]["QueueName"]: lid
            for lid, kind in deployed.types.items()
            if kind == "AWS::SQS::Queue"
        }
        self._inject_send_faults(exit_stack)
        self.runtime = LambdaRuntime(
            self.template.handlers,
            functions=functions,
            faults=self.faults,
            timeout_override_s=self.timeout_override_s,
            on_import=function_log.route_logging if function_log else None,
            reserved_concurrency=self._reserved_concurrency(functions),
        )
        exit_stack.enter_context(self.runtime.installed())
        self._start_event_loops(exit_stack)

    # ---- setup details -----------------------------------------------------------------

    def _isolate_environment(self, exit_stack: contextlib.ExitStack) -> None:
        """The caller's AWS settings are put aside for the stack's life (_LOCAL_ENVIRONMENT)."""
        exit_stack.enter_context(mock.patch.dict(os.environ))
        for key in [k for k in os.environ if k.startswith("AWS_")]:
            del os.environ[key]
        os.environ.update(_LOCAL_ENVIRONMENT)
        # A default session made earlier holds the caller's profile and settings.
        exit_stack.enter_context(mock.patch.object(boto3, "DEFAULT_SESSION", None))

    def _serve(self, exit_stack: contextlib.ExitStack, config: Mapping[str, Any]) -> None:
        from moto.core.config import default_user_config
        from moto.moto_server.werkzeug_app import (
            DomainDispatcherApplication,
            MotoRequestHandler,
            create_backend_app,
        )
        from werkzeug.serving import make_server

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self.server_port or 0))
            listener.listen(128)
            server = make_server(
                "127.0.0.1",
                self.server_port or 0,
                DomainDispatcherApplication(create_backend_app),
                threaded=True,
                request_handler=MotoRequestHandler,
                fd=listener.fileno(),
            )
        except OSError as exc:
            raise PortInUse(
                f"cannot listen on 127.0.0.1:{self.server_port}: {exc.strerror}"
            ) from exc
        finally:
            listener.close()  # the server holds its own duplicate
        self.server_port = int(server.server_address[1])
        thread = threading.Thread(target=server.serve_forever, name="moto-server", daemon=True)
        thread.start()
        exit_stack.callback(thread.join, 10)
        exit_stack.callback(server.server_close)
        exit_stack.callback(server.shutdown)
        # Handlers in this process and the ASL interpreter reach the server by URL.
        os.environ["AWS_ENDPOINT_URL"] = self.endpoint_url or ""
        os.environ["MOTO_PORT"] = str(self.server_port)
        # The server runs in this process, so its configuration is set directly
        # (its /moto-api/config endpoint does not accept the IAM setting).
        settings: dict[str, Any] = default_user_config  # type: ignore[assignment]
        exit_stack.enter_context(
            mock.patch.dict(
                settings,
                {
                    section: {**settings.get(section, {}), **values}
                    for section, values in config.items()
                },
            )
        )

    def _quiet_loggers(self, exit_stack: contextlib.ExitStack) -> None:
        # Fail states log a long ERROR line each; werkzeug logs every request (the event
        # loops poll many times a second), which would bury the server's own output.
        for name, level in (
            ("moto.stepfunctions.parser", logging.CRITICAL),
            ("werkzeug", logging.WARNING),
        ):
            logger = logging.getLogger(name)
            exit_stack.callback(logger.setLevel, logger.level)
            logger.setLevel(level)
        # Handlers that add no metric in an invocation would warn on every one of them.
        exit_stack.enter_context(warnings.catch_warnings())
        warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)

    def _patch_moto(self, exit_stack: contextlib.ExitStack) -> None:
        """Retry sleeps scaled, definition parses and task clients kept, S3 notifications
        with version ids (see the *_TARGET constants)."""
        exit_stack.enter_context(
            mock.patch(RETRY_SLEEP_TARGET, _ScaledSleep(self.retry_delay_scale))
        )
        parser, attribute = _owner(ASL_PARSE_TARGET)
        original = parser.__dict__[attribute].__func__  # a staticmethod
        exit_stack.enter_context(
            mock.patch.object(parser, attribute, staticmethod(_DefinitionParses(original)))
        )
        module, attribute = _owner(LAMBDA_TASK_CLIENT_TARGET)
        exit_stack.enter_context(
            mock.patch.object(module, attribute, _TaskClients(getattr(module, attribute)))
        )
        module, attribute = _owner(S3_NOTIFICATION_TARGET)
        exit_stack.enter_context(
            mock.patch.object(module, attribute, _with_version_id(getattr(module, attribute)))
        )

    def _make_concurrency_safe(self, exit_stack: contextlib.ExitStack) -> None:
        """See DYNAMODB_DISPATCH_TARGET and the two below it."""
        owner, attribute = _owner(DYNAMODB_DISPATCH_TARGET)
        exit_stack.enter_context(
            mock.patch.object(
                owner, attribute, _locked(owner.__dict__[attribute], threading.RLock())
            )
        )
        provider = pkgutil.resolve_name(METRICS_PROVIDER_TARGET)
        metrics_lock = threading.RLock()
        for method in METRICS_METHODS:
            exit_stack.enter_context(
                mock.patch.object(
                    provider, method, _locked(provider.__dict__[method], metrics_lock)
                )
            )
        injector, attribute = _owner(CONDITION_BUILDER_TARGET)
        exit_stack.enter_context(
            mock.patch.object(
                injector, attribute, _with_own_condition_builder(injector.__dict__[attribute])
            )
        )

    def _forget_clients(self) -> None:
        self._clients = None
        self._local = threading.local()

    def _inject_send_faults(self, exit_stack: contextlib.ExitStack) -> None:
        """Apply FaultPlan.fail_sends in moto's SQS backend (see SQS_SEND_TARGET)."""
        from moto.sqs.exceptions import SQSException

        backend, attribute = _owner(SQS_SEND_TARGET)
        original = backend.__dict__[attribute]
        stack = self

        @functools.wraps(original)
        def send_message(backend_self: Any, queue_name: str, *args: Any, **kwargs: Any) -> Any:
            logical_id = stack._queues.get(queue_name)
            fault = stack.faults.take_send(logical_id) if logical_id else None
            if fault is not None:
                raise SQSException(fault.code, fault.message)
            return original(backend_self, queue_name, *args, **kwargs)

        exit_stack.enter_context(mock.patch.object(backend, attribute, send_message))

    def _reserved_concurrency(self, functions: Mapping[str, str]) -> dict[str, int]:
        client = self.client("lambda")
        reserved = {}
        for name, logical_id in functions.items():
            value = client.get_function_concurrency(FunctionName=name).get(
                "ReservedConcurrentExecutions"
            )
            if value is not None:
                reserved[logical_id] = int(value)
        return reserved

    def _apply_function_environment(self, functions: Mapping[str, str]) -> None:
        """Every function's template environment, set for the in-process handlers.

        Handlers share one process, so the variables must agree across functions (the
        template keeps per-function differences out of the environment: memory comes
        from the context, the tier from the state machine). The variables live in the
        environment patched by ``_isolate_environment``, so ``stop`` removes them.
        """
        merged: dict[str, str] = {}
        client = self.client("lambda")
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
        os.environ.update(merged)

    def _start_event_loops(self, exit_stack: contextlib.ExitStack) -> None:
        lambda_client = self.client("lambda")
        sqs = self.client("sqs")
        for mapping in lambda_client.list_event_source_mappings()["EventSourceMappings"]:
            queue_name = mapping["EventSourceArn"].rsplit(":", 1)[1]
            queue_url = sqs.get_queue_url(QueueName=queue_name)["QueueUrl"]
            self._loops.append(
                SqsPoller(
                    sqs=sqs,
                    lambda_client=lambda_client,
                    mapping=mapping,
                    queue_url=queue_url,
                    region=REGION,
                    retry_visibility_s=self.retry_visibility_s,
                )
            )
        invoker = AsyncInvoker(lambda_client=lambda_client, sqs=sqs)
        self._loops.append(
            ExecutionStatusEvents(
                sfn=self.client("stepfunctions"),
                events=self.client("events"),
                invoker=invoker,
                state_machine_arn=self.outputs["StateMachineArn"],
                region=REGION,
                account=ACCOUNT,
            )
        )
        self._schedule_rules = ScheduledRules(
            events=self.client("events"), invoker=invoker, region=REGION, account=ACCOUNT
        )
        self._schedule_rules.rules()  # refuse schedule expressions that are not emulated
        if self.schedules:
            self._loops.append(self._schedule_rules)
        exit_stack.callback(self._stop_event_loops)
        for loop in self._loops:
            loop.start()

    def _stop_event_loops(self) -> None:
        for loop in self._loops:
            loop.stop()
        for loop in self._loops:
            loop.join(timeout=5)
        self._loops.clear()

    # ---- using the stack ---------------------------------------------------------------

    @property
    def client(self) -> Clients:
        """``stack.client("s3")``: the stack's client of a service, one per service for the
        stack's life, typed per service."""
        assert self._clients is not None, "the stack is not started"
        return self._clients

    @property
    def session(self) -> boto3.Session:
        return self.client.session

    @property
    def jobs(self) -> JobStore:
        """The job store, one per calling thread: boto3 resources are not thread-safe."""
        store: JobStore | None = getattr(self._local, "jobs", None)
        if store is None:
            store = self._local.jobs = JobStore(self.client.table(self.outputs["JobsTableName"]))
        return store

    def fire_schedules(self, at: datetime | None = None) -> int:
        """Fire every scheduled rule now, as EventBridge would at time ``at`` (default: now);
        the targets' invocations, retries and failure destinations are done on return.
        Returns how many rules fired."""
        assert self._schedule_rules is not None, "the stack is not started"
        return self._schedule_rules.fire_all(at)

    @property
    def loop_errors(self) -> list[BaseException]:
        return [error for loop in self._loops for error in loop.errors]

    def upload(
        self,
        path: Path,
        key: str | None = None,
        metadata: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> Upload:
        bucket = self.outputs["IngestBucketName"]
        key = key or path.name
        data = path.read_bytes() if body is None else body
        response = self.client("s3").put_object(
            Bucket=bucket, Key=key, Body=data, Metadata=dict(metadata or {})
        )
        version = response.get("VersionId")
        etag = response["ETag"].strip('"')
        return Upload(bucket, key, version, job_id_for(bucket, key, version or etag))

    def wait_for_jobs(
        self,
        job_ids: Iterable[str],
        timeout_s: float = 300.0,
        on_progress: Callable[[Job], None] | None = None,
    ) -> dict[str, Job | None]:
        """Wait until every job is terminal or the timeout passes; returns the records
        (None for a job that has none; a late job's record is not terminal).

        Each poll reads only the statuses of the pending jobs (``JobStore.statuses``), and
        whole records only for jobs that just ended: with hundreds of jobs in flight, one
        request per job, or whole items every 0.1 s, was most of the waiting's cost.
        Raises ``EventLoopFailed`` as soon as an event loop fails (jobs could not progress).
        """
        pending = list(dict.fromkeys(job_ids))
        results: dict[str, Job | None] = dict.fromkeys(pending)
        deadline = time.monotonic() + timeout_s
        while True:
            if self.loop_errors:
                raise EventLoopFailed(self.loop_errors)
            ended = [i for i, status in self.jobs.statuses(pending).items() if status.terminal]
            for job_id, job in self.jobs.get_many(ended).items():
                results[job_id] = job
                pending.remove(job_id)
                if on_progress:
                    on_progress(job)
            if not pending or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        results.update(self.jobs.get_many(pending))  # the records of the late ones
        return results

    def artifact(self, key: str) -> bytes:
        return (
            self.client("s3")
            .get_object(Bucket=self.outputs["ArtifactBucketName"], Key=key)["Body"]
            .read()
        )
