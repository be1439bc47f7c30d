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
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import boto3

from richdoc.jobs import Job, JobStore, job_id_for
from richdoc.local.events import ExecutionStatusEvents, SqsPoller, wait_until
from richdoc.local.lambdas import FUNCTION_THREAD_PREFIX, FaultPlan, LambdaRuntime
from richdoc.local.provision import Provisioner
from richdoc.local.template import Template, load_template

REGION = "us-east-1"
ACCOUNT = "123456789012"
DEFAULT_STACK_NAME = "richdoc"

# moto internals the stack relies on besides the Lambda dispatcher (see lambdas.PATCH_TARGET).
RETRY_SLEEP_TARGET = "moto.stepfunctions.parser.asl.component.common.retry.retrier_decl.time"

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
        self.runtime = LambdaRuntime(
            self.template.handlers,
            functions=functions,
            faults=self.faults,
            timeout_override_s=self.timeout_override_s,
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
        self._loops.append(
            ExecutionStatusEvents(
                sfn=self.client("stepfunctions"),
                events=self.client("events"),
                lambda_client=lambda_client,
                state_machine_arn=self.outputs["StateMachineArn"],
                region=REGION,
                account=ACCOUNT,
            )
        )
        for loop in self._loops:
            loop.start()

    # ---- using the stack ---------------------------------------------------------------

    def client(self, service: str) -> Any:
        assert self.session is not None, "the stack is not started"
        return self.session.client(service, region_name=REGION, endpoint_url=self.endpoint_url)

    @property
    def jobs(self) -> JobStore:
        assert self.session is not None
        table = self.session.resource(
            "dynamodb", region_name=REGION, endpoint_url=self.endpoint_url
        ).Table(self.outputs["JobsTableName"])
        return JobStore(table)

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
        """Wait until every job is terminal (or the timeout passes); returns the records."""
        pending = list(dict.fromkeys(job_ids))
        results: dict[str, Job | None] = dict.fromkeys(pending)
        store = self.jobs

        def check() -> bool:
            for job_id in list(pending):
                job = store.get(job_id)
                results[job_id] = job
                if job is not None and job.status.terminal:
                    pending.remove(job_id)
                    if on_progress:
                        on_progress(job)
            return not pending

        wait_until(check, timeout_s, interval_s=0.1)
        return results

    def artifact(self, key: str) -> bytes:
        body: bytes = (
            self.client("s3")
            .get_object(Bucket=self.outputs["ArtifactBucketName"], Key=key)["Body"]
            .read()
        )
        return body
