"""The embedded stack: template.yaml deployed into an in-process AWS emulation (moto).

It runs the real state machine definition with moto's Amazon States Language
interpreter, the real handlers (see ``lambdas``), the S3 -> SQS notification, the SQS
event source with partial batch failures and the dead-letter redrive policy (see
``events``). ``richdoc run``, ``richdoc local serve`` and the end-to-end tests use it.

Two modes: in-process (``mock_aws``; boto3 in this process talks to the emulation) and
server (``ThreadedMotoServer`` on 127.0.0.1, so the AWS CLI and other processes can use
``--endpoint-url``). Both install the same Lambda dispatcher and event loops.
"""

from __future__ import annotations

import functools
import io
import json
import logging
import os
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import boto3

from richdoc.jobs import JOB_SK, Job, JobStatus, JobStore, job_id_for
from richdoc_tools.local.events import (
    AsyncInvoker,
    ExecutionStatusEvents,
    ScheduledRules,
    SqsPoller,
    wait_until,
)
from richdoc_tools.local.lambdas import FUNCTION_THREAD_PREFIX, FaultPlan, LambdaRuntime
from richdoc_tools.local.provision import Provisioner
from richdoc_tools.local.template import Template, load_template

REGION = "us-east-1"
ACCOUNT = "123456789012"
DEFAULT_STACK_NAME = "richdoc"

# moto internals the stack relies on besides the Lambda dispatcher (see lambdas.PATCH_TARGET).
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
# The fault hook for SQS (FaultPlan.fail_sends): every SendMessage request, from the state
# machine's sqs:sendMessage task or a handler's boto3 client, reaches this backend method.
# (Messages SQS itself moves to a dead-letter queue by a redrive policy do not.)
SQS_SEND_TARGET = "moto.sqs.models.SQSBackend.send_message"

_LOCAL_ENVIRONMENT = {
    # No credentials or network needed: everything is emulated in this process.
    "AWS_ACCESS_KEY_ID": "richdoc-local",
    "AWS_SECRET_ACCESS_KEY": "richdoc-local",
    "AWS_SESSION_TOKEN": "richdoc-local",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
    # No X-Ray daemon locally. (Metrics stay on: their EMF lines go to the function log.)
    "POWERTOOLS_TRACE_DISABLED": "true",
}


@dataclass(frozen=True)
class Upload:
    bucket: str
    key: str
    version_id: str | None
    job_id: str


class _FunctionOutput(io.TextIOBase):
    """Standard output as Lambda gives it: what function code prints (Powertools log lines,
    EMF metrics) goes to the function log, as it would go to CloudWatch Logs; the rest of
    the process keeps the console."""

    def __init__(self, console: IO[str], log: IO[str]) -> None:
        self.console = console
        self.log = log

    def _target(self) -> IO[str]:
        in_function = threading.current_thread().name.startswith(FUNCTION_THREAD_PREFIX)
        return self.log if in_function else self.console

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self.console.flush()
        self.log.flush()

    def isatty(self) -> bool:
        return self.console.isatty()

    def fileno(self) -> int:
        return self.console.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.console, "encoding", "utf-8")


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
        server_port: int | None = None,
        schedules: bool = True,
    ) -> None:
        self.root = root
        self.stack_name = stack_name
        self.parameters = dict(parameters or {})
        self.retry_delay_scale = retry_delay_scale
        self.retry_visibility_s = retry_visibility_s
        self.faults = faults or FaultPlan()
        self.timeout_override_s = dict(timeout_override_s or {})
        self.log_path = log_path
        self.server_port = server_port
        # Scheduled rules fire on their own schedule (the sweep: every SweepIntervalMinutes);
        # with False only fire_schedules() fires them (tests choose when, and the time).
        self.schedules = schedules
        self.template: Template | None = None
        self.outputs: dict[str, str] = {}
        self.runtime: LambdaRuntime | None = None
        self.session: boto3.Session | None = None
        self._mock: Any = None
        self._server: Any = None
        self._loops: list[Any] = []
        self._saved_env: dict[str, str | None] = {}
        self._log_file: IO[str] | None = None
        self._console: IO[str] | None = None
        self._retrier_module: Any = None
        self._real_time: Any = None
        self._restore: list[tuple[Any, str, Any]] = []  # (owner, attribute, original)
        self._clients: dict[str, Any] = {}
        self._clients_lock = threading.Lock()
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
        return f"http://127.0.0.1:{self.server_port}" if self.server_port else None

    def start(self) -> None:
        self.template = load_template(self.root, account=ACCOUNT, region=REGION)
        self._set_environment(_LOCAL_ENVIRONMENT)
        config: Any = {
            "stepfunctions": {"execute_state_machine": True},
            "iam": {"load_aws_managed_policies": True},
        }
        if self.server_port:
            from moto.moto_server.threaded_moto_server import ThreadedMotoServer

            self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.server_port)
            self._server.start()
            # Handlers in this process and the ASL interpreter reach the server by URL.
            self._set_environment(
                {
                    "AWS_ENDPOINT_URL": self.endpoint_url or "",
                    "MOTO_PORT": str(self.server_port),
                }
            )
            # The server runs in this process, so its configuration is set directly
            # (its /moto-api/config endpoint does not accept the IAM setting).
            from moto.core.config import default_user_config

            settings: dict[str, Any] = default_user_config  # type: ignore[assignment]
            for section, values in config.items():
                settings[section] = {**settings.get(section, {}), **values}
        else:
            from moto import mock_aws

            self._mock = mock_aws(config=config)
            self._mock.start()
        logging.getLogger("moto.stepfunctions.parser").setLevel(logging.CRITICAL)
        # Metrics are disabled locally; Powertools would warn about it on every invocation.
        warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)
        self._scale_retry_sleeps()
        self._speed_up_interpreter()
        self._make_concurrency_safe()

        self.session = boto3.Session(region_name=REGION)
        provisioner = Provisioner(
            self.session,
            self.template,
            stack_name=self.stack_name,
            region=REGION,
            account=ACCOUNT,
            parameters=self.parameters,
        )
        deployed = provisioner.deploy()
        self.outputs = provisioner.outputs()
        self._register_outputs()

        functions = {
            deployed.refs[lid]: lid
            for lid, kind in deployed.types.items()
            if kind == "AWS::Lambda::Function"
        }
        self._apply_function_environment(functions)
        self._open_function_log()
        self._queues = {
            deployed.attributes[lid]["QueueName"]: lid
            for lid, kind in deployed.types.items()
            if kind == "AWS::SQS::Queue"
        }
        self._inject_send_faults()
        self.runtime = LambdaRuntime(
            self.template.handlers,
            functions=functions,
            faults=self.faults,
            timeout_override_s=self.timeout_override_s,
            reserved_concurrency=self._reserved_concurrency(functions),
        )
        self.runtime.install()
        self._start_event_loops()

    def stop(self) -> None:
        for loop in self._loops:
            loop.stop()
        for loop in self._loops:
            loop.join(timeout=5)
        self._loops.clear()
        if self.runtime:
            self.runtime.uninstall()
        if self._retrier_module is not None:
            self._retrier_module.time = self._real_time
            self._retrier_module = None
        for owner, attribute, original in reversed(self._restore):
            setattr(owner, attribute, original)
        self._restore.clear()
        self._clients.clear()
        self._local = threading.local()
        if self._mock is not None:
            self._mock.stop()
            self._mock = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()
        if self._log_file:
            if self._console is not None:
                sys.stdout = self._console
                self._console = None
            self._log_file.close()
            self._log_file = None

    # ---- setup details -----------------------------------------------------------------

    def _set_environment(self, values: Mapping[str, str]) -> None:
        for key, value in values.items():
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    def _scale_retry_sleeps(self) -> None:
        import importlib

        module_name, _, attribute = RETRY_SLEEP_TARGET.rpartition(".")
        module = importlib.import_module(module_name)
        self._retrier_module, self._real_time = module, getattr(module, attribute)
        module.time = _ScaledSleep(self.retry_delay_scale)  # type: ignore[attr-defined]

    def _speed_up_interpreter(self) -> None:
        """Cache what moto's interpreter redoes for every execution and task (see
        ASL_PARSE_TARGET and LAMBDA_TASK_CLIENT_TARGET); both are undone by ``stop``."""
        import importlib
        import inspect

        module_name, _, rest = ASL_PARSE_TARGET.rpartition(".")
        module_name, _, class_name = module_name.rpartition(".")
        parser = getattr(importlib.import_module(module_name), class_name)
        original = inspect.getattr_static(parser, rest)
        self._restore.append((parser, rest, original))
        setattr(parser, rest, staticmethod(_DefinitionParses(original.__func__)))

        module_name, _, attribute = LAMBDA_TASK_CLIENT_TARGET.rpartition(".")
        module = importlib.import_module(module_name)
        self._restore.append((module, attribute, getattr(module, attribute)))
        setattr(module, attribute, _TaskClients(getattr(module, attribute)))

    def _make_concurrency_safe(self) -> None:
        """See DYNAMODB_DISPATCH_TARGET and the two below it; undone by ``stop``."""
        import copy
        import importlib

        def resolve(target: str) -> tuple[Any, str]:
            module_name, _, attribute = target.rpartition(".")
            module_name, _, class_name = module_name.rpartition(".")
            return getattr(importlib.import_module(module_name), class_name), attribute

        def locked(owner: Any, attribute: str, lock: Any) -> None:
            original = owner.__dict__[attribute]

            @functools.wraps(original)
            def call(*args: Any, **kwargs: Any) -> Any:
                with lock:
                    return original(*args, **kwargs)

            self._restore.append((owner, attribute, original))
            setattr(owner, attribute, call)

        locked(*resolve(DYNAMODB_DISPATCH_TARGET), threading.RLock())

        provider = importlib.import_module(METRICS_PROVIDER_TARGET.rpartition(".")[0])
        provider_class = getattr(provider, METRICS_PROVIDER_TARGET.rpartition(".")[2])
        metrics_lock = threading.RLock()
        for method in METRICS_METHODS:
            locked(provider_class, method, metrics_lock)

        injector, attribute = resolve(CONDITION_BUILDER_TARGET)
        original = injector.__dict__[attribute]
        from boto3.dynamodb.conditions import ConditionExpressionBuilder

        @functools.wraps(original)
        def inject(injector_self: Any, *args: Any, **kwargs: Any) -> Any:
            own = copy.copy(injector_self)
            own._condition_builder = ConditionExpressionBuilder()
            return original(own, *args, **kwargs)

        self._restore.append((injector, attribute, original))
        setattr(injector, attribute, inject)

    def _inject_send_faults(self) -> None:
        """Apply FaultPlan.fail_sends in moto's SQS backend (see SQS_SEND_TARGET); undone
        by ``stop``."""
        import importlib

        from moto.sqs.exceptions import SQSException

        module_name, _, attribute = SQS_SEND_TARGET.rpartition(".")
        module_name, _, class_name = module_name.rpartition(".")
        backend = getattr(importlib.import_module(module_name), class_name)
        original = backend.__dict__[attribute]
        stack = self

        @functools.wraps(original)
        def send_message(backend_self: Any, queue_name: str, *args: Any, **kwargs: Any) -> Any:
            logical_id = stack._queues.get(queue_name)
            fault = stack.faults.take_send(logical_id) if logical_id else None
            if fault is not None:
                raise SQSException(fault.code, fault.message)
            return original(backend_self, queue_name, *args, **kwargs)

        self._restore.append((backend, attribute, original))
        setattr(backend, attribute, send_message)

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
        from the context, the tier from the state machine).
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
        self._set_environment(merged)

    def _open_function_log(self) -> None:
        """Route function output to the log file (before any handler module is imported,
        so Powertools loggers bind to the routed stream)."""
        if self.log_path is None:
            return
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = self.log_path.open("a", encoding="utf-8")
        self._console = sys.stdout
        sys.stdout = _FunctionOutput(sys.stdout, self._log_file)

    def _register_outputs(self) -> None:
        """Publish the stack's outputs under its name, as CloudFormation does on AWS, so
        operator commands find the resources the same way locally and deployed."""
        body = {
            "Resources": {"Outputs": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
            "Outputs": {name: {"Value": value} for name, value in self.outputs.items()},
        }
        with warnings.catch_warnings():  # moto notes it does not model the placeholder
            warnings.simplefilter("ignore", UserWarning)
            self.client("cloudformation").create_stack(
                StackName=self.stack_name, TemplateBody=json.dumps(body)
            )

    def _start_event_loops(self) -> None:
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
        for loop in self._loops:
            loop.start()

    # ---- using the stack ---------------------------------------------------------------

    def client(self, service: str) -> Any:
        """One client per service for the stack's life (boto3 clients are thread-safe;
        creating one costs more than most calls made with it)."""
        assert self.session is not None, "the stack is not started"
        with self._clients_lock:
            client = self._clients.get(service)
            if client is None:
                client = self._clients[service] = self.session.client(
                    service, region_name=REGION, endpoint_url=self.endpoint_url
                )
        return client

    @property
    def jobs(self) -> JobStore:
        """The job store, one per calling thread: boto3 resources are not thread-safe."""
        assert self.session is not None
        store: JobStore | None = getattr(self._local, "jobs", None)
        if store is None:
            with self._clients_lock:  # a boto3 session is not thread-safe either
                table = self.session.resource(
                    "dynamodb", region_name=REGION, endpoint_url=self.endpoint_url
                ).Table(self.outputs["JobsTableName"])
            store = self._local.jobs = JobStore(table)
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
        self, job_ids: Iterable[str], timeout_s: float = 300.0, on_progress: Any = None
    ) -> dict[str, Job | None]:
        """Wait until every job is terminal (or the timeout passes); returns the records.

        Each poll reads only the statuses of the pending jobs (one BatchGetItem per 100),
        and whole records only for jobs that just ended: with hundreds of jobs in flight,
        one request per job, or whole items every 0.1 s, was most of the waiting's cost.
        """
        pending = list(dict.fromkeys(job_ids))
        results: dict[str, Job | None] = dict.fromkeys(pending)

        def check() -> bool:
            statuses = self._read_items(pending, projection="job_id, job_status")
            ended = [
                job_id
                for job_id, item in statuses.items()
                if JobStatus(item["job_status"]).terminal
            ]
            for job_id, item in self._read_items(ended).items():
                job = results[job_id] = Job.from_item(item)
                pending.remove(job_id)
                if on_progress:
                    on_progress(job)
            return not pending

        wait_until(check, timeout_s, interval_s=0.1)
        for job_id, item in self._read_items(pending).items():  # the records of the late ones
            results[job_id] = Job.from_item(item)
        return results

    def _read_items(self, job_ids: Iterable[str], projection: str | None = None) -> dict[str, Any]:
        """Job items by job id (missing jobs are absent), 100 per BatchGetItem."""
        from boto3.dynamodb.types import TypeDeserializer

        deserialize = TypeDeserializer().deserialize
        table, client = self.outputs["JobsTableName"], self.client("dynamodb")
        ids, found = list(job_ids), {}
        for start in range(0, len(ids), 100):
            keys = [
                {"pk": {"S": f"JOB#{i}"}, "sk": {"S": JOB_SK}} for i in ids[start : start + 100]
            ]
            spec: dict[str, Any] = {"Keys": keys, "ConsistentRead": True}
            if projection:
                spec["ProjectionExpression"] = projection
            request: dict[str, Any] = {table: spec}
            while request:
                response = client.batch_get_item(RequestItems=request)
                for raw in response["Responses"].get(table, []):
                    item = {k: deserialize(v) for k, v in raw.items()}
                    found[item["job_id"]] = item
                request = response.get("UnprocessedKeys") or {}
        return found

    def artifact(self, key: str) -> bytes:
        body: bytes = (
            self.client("s3")
            .get_object(Bucket=self.outputs["ArtifactBucketName"], Key=key)["Body"]
            .read()
        )
        return body
