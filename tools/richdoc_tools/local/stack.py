"""The embedded stack: template.yaml deployed into an in-process AWS emulation (moto).

It runs the real state machine definition with moto's Amazon States Language
interpreter, the real handlers, the S3 -> SQS notification, the SQS event source with
partial batch failures and the dead-letter redrive policy. ``richdoc run``, ``richdoc
local serve`` and the end-to-end tests use it.

``EmbeddedStack`` is what its users see: start and stop, upload, wait for jobs, read job
records and artifacts, fire schedules, script failures. Starting it takes five steps, in
this order: **emulate** (``emulation``: the caller's AWS settings put aside, moto in this
process or served on 127.0.0.1), **patch** (the changes to moto, ``moto_fixes``, then
the stack's seams over them, ``patches``),
**deploy** (the template, ``cloudformation``), **enforce** (the roles assumed and every
request through the gate, ``strict``; the scripted and injected failures, ``faults``) and
**run** (the function log, the Lambda runtime and the event loops, ``runtime``; the API
destinations' deliveries among them, ``runtime.webhooks``). Everything they change in the
process is changed through one ``contextlib.ExitStack``, which ``stop`` closes.

A stack is strict by default: it enforces what AWS enforces and moto does not (each
function's IAM role, DynamoDB transaction conflicts, the SQS, S3 and Lambda validations;
docs/embedded-stack.md). ``strict=False`` (``--lenient``) turns that off for debugging.
``injected_faults`` makes it fail at a rate, reproducibly (``faults.injected``);
``script`` holds a test's scripted failures (``faults.scripted``). ``index_lag`` makes
the DynamoDB tables' global secondary indexes show a write some time after the table
does, as AWS's do (``moto_fixes.fidelity.dynamodb_index_lag``); injected faults widen it
(and turn it on at AWS's usual lag when none is given).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import boto3

from richdoc.jobs import Job, JobStore, Progress
from richdoc.wiring import wiring
from richdoc_tools.local import emulation, patches
from richdoc_tools.local.clients import Clients
from richdoc_tools.local.cloudformation.deploy import Deployment
from richdoc_tools.local.cloudformation.intrinsics import Deployed
from richdoc_tools.local.cloudformation.provisioners import NotEmulated
from richdoc_tools.local.cloudformation.template import Template, load_template
from richdoc_tools.local.cloudformation.update import UpdateResult, update_stack
from richdoc_tools.local.emulation import ACCOUNT, REGION
from richdoc_tools.local.faults.injected import STATE_MACHINE_STAGE, FaultInjector
from richdoc_tools.local.faults.invocations import InvocationFailures
from richdoc_tools.local.faults.scripted import FailureScript, ServiceError
from richdoc_tools.local.moto_fixes import fidelity, speed
from richdoc_tools.local.moto_fixes.fidelity import dynamodb_index_lag
from richdoc_tools.local.moto_fixes.fidelity.dynamodb_index_lag import (
    WITHIN_A_SECOND,
    IndexPropagation,
)
from richdoc_tools.local.requests import callers
from richdoc_tools.local.requests.service_request import ServiceRequest
from richdoc_tools.local.runtime.clock import StackClock
from richdoc_tools.local.runtime.event_delivery import EventDelivery
from richdoc_tools.local.runtime.job_writes import JobWrites
from richdoc_tools.local.runtime.lambdas import (
    LambdaRuntime,
    reserved_concurrency,
    runs_in_this_process,
    shared_environment,
)
from richdoc_tools.local.runtime.output import FunctionLog
from richdoc_tools.local.runtime.s3_lifecycle import Expired, Lifecycle
from richdoc_tools.local.runtime.sandboxes import Sandboxes
from richdoc_tools.local.runtime.shard_reader import ShardReader
from richdoc_tools.local.runtime.streams import appended
from richdoc_tools.local.runtime.webhooks import WebhookDelivery
from richdoc_tools.local.settings import StackSettings
from richdoc_tools.local.strict.access import AccessControl, assume_all, assume_target_roles
from richdoc_tools.local.strict.transactions import Transactions
from richdoc_tools.ops.uploads import Upload, put_source

DEFAULT_STACK_NAME = "richdoc"
# Every attribute of moto, boto3 and Powertools a running stack replaces (or adds), as
# dotted paths: the stack's seams and the changes to moto.
REPLACED = (
    *patches.PATCHED,
    *(path for change in (*fidelity.FIXES, *speed.PATCHES) for path in change.PATCHED),
)
# Where several wrap one method: the modules that do, in the order a strict stack installs
# them (each wraps what was installed before it: the first is innermost). The changes to
# moto go in first and the stack's seams over them, so that a seam sees moto as fixed.
WRAPPED: dict[str, tuple[str, ...]] = {
    # A scripted failure (``_enforce``) is answered before the message is validated.
    "moto.sqs.models.SQSBackend.send_message": (
        "moto_fixes.fidelity.sqs_message_validation",
        "patches.sqs_send_failures",
    ),
    # A transaction holds its items outside the backend's lock.
    "moto.dynamodb.responses.DynamoHandler.call_action": (
        "patches.dynamodb_lock",
        "patches.dynamodb_transactions",
    ),
    # An end is announced once, when the execution leaves RUNNING: at a stop, which the
    # fix makes abort at once, and not again when the interpreter reflects it.
    "moto.stepfunctions.responses.StepFunctionResponse.stop_execution": (
        "moto_fixes.fidelity.stop_execution",
        "patches.execution_ends",
    ),
    (
        "moto.stepfunctions.parser.backend.execution."
        "BaseExecutionWorkerCommunication._reflect_execution_status"
    ): (
        "moto_fixes.fidelity.stop_execution",
        "patches.execution_ends",
    ),
}
# wait_for_jobs polls at most every POLL_SPACING_S, plus POLL_SPACING_PER_JOB_S for each
# job it still waits for (a poll reads those of them written since the last: at most
# about 50 job reads a second however many it waits for), never more than
# POLL_SPACING_MAX_S apart: the latency it may add to a job's end.
POLL_SPACING_S = 0.1
POLL_SPACING_PER_JOB_S = 0.02
POLL_SPACING_MAX_S = 1.0


def poll_spacing_s(pending: int) -> float:
    return min(POLL_SPACING_MAX_S, POLL_SPACING_S + POLL_SPACING_PER_JOB_S * pending)


def _stopped(loop: WebhookDelivery) -> None:
    loop.stop()
    loop.join(timeout=10)  # a request in flight ends within its 5-second timeout


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


# What the embedded stack deploys differently from the template's defaults: the parse
# image carries docling's layout weights and the template asks for them (PdfPipeline
# standard, so that a deploy without them fails rather than reads PDFs another way); this
# machine has no model hub, so PDFs are read by the light pipeline, whose models come
# with its packages, unless DOCLING_ARTIFACTS_PATH points at docling's weights.
LOCAL_PARAMETERS = {"PdfPipeline": "auto"}


def with_local_defaults(template: Template, given: Mapping[str, str]) -> dict[str, str]:
    """The parameters a stack deploys: ``given`` over the local defaults ``template``
    declares (an older release's template has none of them)."""
    declared = template.cfn.get("Parameters", {})
    return {**{k: v for k, v in LOCAL_PARAMETERS.items() if k in declared}, **given}


class EmbeddedStack:
    def __init__(self, settings: StackSettings | None = None) -> None:
        """A stack started as ``settings`` say (``StackSettings``' defaults without)."""
        self.settings = settings = settings or StackSettings()
        # The checkout and parameters deployed (``update`` deploys others) and the port a
        # served stack listens on (when 0, the one it bound as it started).
        self.root = settings.root
        self.parameters = dict(settings.parameters)
        self.server_port = settings.server_port
        # A test's scripted failures: can be added to while the stack runs.
        self.script = FailureScript()
        self.injector = FaultInjector(settings.injected_faults)
        index_lag = settings.index_lag
        if settings.injected_faults is not None and self.injector.enabled:
            index_lag = (index_lag or WITHIN_A_SECOND).under_faults(settings.injected_faults.seed)
        # The indexes' propagation (tests hold it: ``stack.indexes.held()``).
        strict_lag = index_lag if settings.strict else None
        self.indexes = IndexPropagation(strict_lag) if strict_lag is not None else None
        # The clock S3 lifecycle rules and stream record ages read; a day lasts
        # lifecycle_day_s seconds (default: a day). Tests advance it.
        day_s = settings.lifecycle_day_s
        self.clock = StackClock.with_day(day_s) if day_s else StackClock()
        self.lifecycle = Lifecycle(self.clock, account=ACCOUNT)
        self.transactions = Transactions()
        self.access: AccessControl | None = None
        self.template: Template | None = None
        self.outputs: dict[str, str] = {}
        self.not_emulated: list[NotEmulated] = []
        self.runtime: LambdaRuntime | None = None
        self.delivery: EventDelivery | None = None
        self.webhooks: WebhookDelivery | None = None
        self.function_log: FunctionLog | None = None
        self._clients: Clients | None = None
        self._local = threading.local()
        self._queues: dict[str, str] = {}  # queue name -> logical id (scripted send failures)
        self._exit: contextlib.ExitStack | None = None
        self._deployment: Deployment | None = None
        self._environment: dict[str, str] = {}  # the functions' variables set in os.environ
        self._sandbox_environment: dict[str, str] = {}

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

    def update(
        self, root: Path | None = None, parameters: Mapping[str, str] | None = None
    ) -> UpdateResult:
        """Update the running stack to the template of the checkout ``root`` (this
        one's by default) with ``parameters`` (the template's defaults for the rest), as
        CloudFormation updates a stack (``cloudformation.update``): every function's code
        becomes that checkout's (invocations already running finish on the code they
        started with; executions keep their definition), new resources are created,
        changed ones updated in place or replaced, removed ones deleted; the runtime, the
        roles and the event sources follow. Raises ``StackUpdateFailed`` after rolling
        back (the stack is as it was), ``TemplateError`` for parameters or rules the
        template refuses."""
        assert self._deployment is not None and self.runtime is not None, "not started"
        assert self.delivery is not None
        template = load_template(root, account=ACCOUNT, region=REGION)
        deployed_parameters = with_local_defaults(template, parameters or {})
        result = update_stack(self._deployment, template, deployed_parameters)
        self.root, self.template, self.parameters = root, template, deployed_parameters
        deployed = self._deployment.deployed
        self._publish(self._deployment, updated=True)
        self._set_environment(deployed)
        self._local = threading.local()  # a job store per thread, of the table as it is now
        self.__dict__.pop("jobs_stream_arn", None)  # a changed stream has another ARN
        if self.access is not None:
            self._assume(deployed)
        functions = _functions(deployed)
        self.runtime.redeploy(
            template.handlers,
            functions=functions,
            reserved_concurrency=reserved_concurrency(self.client("lambda"), functions),
            principals=self.access.principals if self.access else {},
        )
        self.delivery.refresh(
            self._roles_by_arn(deployed.attributes, functions), deployed.disabled_mappings
        )
        self.delivery.status_events.state_machine_arn = self.outputs["StateMachineArn"]
        return result

    def _start(self, exit_stack: contextlib.ExitStack) -> None:
        self._emulate(exit_stack)
        self._patch(exit_stack)
        deployed = self._deploy(exit_stack)
        self._enforce(exit_stack, deployed)
        self._run(exit_stack, deployed)

    def _emulate(self, exit_stack: contextlib.ExitStack) -> None:
        """moto in this process, or served; the caller's AWS settings put aside."""
        emulation.isolate_environment(exit_stack)  # first: moto makes boto3 sessions on import
        self.template = load_template(self.root, account=ACCOUNT, region=REGION)
        self.parameters = with_local_defaults(self.template, self.parameters)
        if self.server_port is None:
            emulation.run_in_process(exit_stack)
        else:
            try:
                self.server_port = emulation.serve(exit_stack, self.server_port)
            except OSError as exc:
                raise PortInUse(
                    f"cannot listen on 127.0.0.1:{self.server_port}: {exc.strerror}"
                ) from exc
        emulation.quiet_loggers(exit_stack)
        # What another release's code runs with in its sandboxes, under each function's
        # own variables (runtime.sandboxes): the environment as the emulation set it.
        self._sandbox_environment = dict(os.environ)

    def _patch(self, exit_stack: contextlib.ExitStack) -> None:
        """The patch points and the changes to moto the deployment already needs (the rest
        wait for what it creates: the roles, the queues, the functions). The changes to
        moto go in first, the stack's seams over them (``WRAPPED``)."""
        patches.retry_sleep.install(exit_stack, self.settings.retry_delay_scale)
        speed.install(exit_stack)
        fidelity.install(exit_stack, fidelity.EVERY_STACK)
        patches.install(exit_stack, patches.EMULATION)
        patches.install(exit_stack, patches.CALLERS)
        patches.execution_caller.install(exit_stack, self._enter_execution, self._leave_execution)
        patches.sdk_retry_sleep.install(exit_stack, self.settings.retry_delay_scale)
        if self.settings.strict:
            fidelity.install(exit_stack, fidelity.STRICT)
            if self.indexes is not None:
                dynamodb_index_lag.install(exit_stack, self.indexes)
            # After dynamodb_lock: transactions are held outside the backend's lock.
            patches.dynamodb_transactions.install(
                exit_stack, self.transactions, self.injector.running
            )
            exit_stack.callback(self.transactions.release_all)

    def _deploy(self, exit_stack: contextlib.ExitStack) -> Deployed:
        """The template's resources created, its outputs published, and the functions'
        environment set for the handlers."""
        assert self.template is not None
        exit_stack.callback(self._forget_clients)
        clients = self._clients = Clients(
            boto3.Session(region_name=REGION), region=REGION, endpoint_url=self.endpoint_url
        )
        deployment = self._deployment = Deployment(
            clients,
            self.template,
            stack_name=self.settings.stack_name,
            region=REGION,
            account=ACCOUNT,
            parameters=self.parameters,
        )
        deployed = deployment.deploy()
        self._publish(deployment, updated=False)
        patches.stack_templates.install(exit_stack, self._deployed_template)
        self._set_environment(deployed)
        exit_stack.callback(wiring.reset)
        return deployed

    def _deployed_template(self, name_or_stack_id: str) -> str | None:
        """The template the stack runs, as submitted (GetTemplate's answer for it)."""
        name = self.settings.stack_name
        if name_or_stack_id != name and f":stack/{name}/" not in name_or_stack_id:
            return None
        assert self.template is not None
        return (self.template.root / "template.yaml").read_text()

    def _publish(self, deployment: Deployment, *, updated: bool) -> None:
        self.outputs = deployment.outputs()
        self.not_emulated = list(deployment.not_emulated)
        deployment.publish(self.outputs, updated=updated)

    def _set_environment(self, deployed: Deployed) -> None:
        """The environment of the functions whose code runs in this process (every
        function's merged), in place of the last one; the handlers' clients and stores
        are built again from it (and forgotten at stop). Set in the environment
        isolate_environment patched, so stop removes it."""
        assert self.template is not None
        in_process = {
            name: lid
            for name, lid in _functions(deployed).items()
            if runs_in_this_process(self.template.handlers[lid])
        }
        environment = shared_environment(self.client("lambda"), in_process)
        for gone in self._environment.keys() - environment.keys():
            os.environ.pop(gone, None)
        os.environ.update(environment)
        self._environment = environment
        wiring.reset()

    def _enforce(self, exit_stack: contextlib.ExitStack, deployed: Deployed) -> None:
        """Each role assumed and every request through the gate (strict stacks: IAM; any
        stack: the injected faults), the scripted SendMessage failures in place."""
        if self.settings.strict:
            self.access = AccessControl(account=ACCOUNT, region=REGION)
            self._assume(deployed)
            patches.s3_missing_key.install(exit_stack, self.access.missing_key_denial)
        patches.request_gate.install(exit_stack, self._checks(), self._gated)
        self._queues = {
            deployed.attributes[lid]["QueueName"]: lid
            for lid, kind in deployed.types.items()
            if kind == "AWS::SQS::Queue"
        }
        patches.sqs_send_failures.install(exit_stack, self._scripted_send_failure)

    def _assume(self, deployed: Deployed) -> None:
        """Every function's, state machine's and API destination target's role assumed,
        and its policies read (again after an update)."""
        assert self.access is not None
        state_machines = [
            (lid, deployed.refs[lid])
            for lid, kind in deployed.types.items()
            if kind == "AWS::StepFunctions::StateMachine"
        ]
        assume_all(self.access, self.client, _functions(deployed), state_machines)
        assume_target_roles(self.access, self.client)

    def _run(self, exit_stack: contextlib.ExitStack, deployed: Deployed) -> None:
        """The function log, the Lambda runtime and the event loops."""
        assert self.template is not None
        function_log = None
        if self.settings.log_path is not None:
            # Before any handler module is imported (see output.FunctionLog).
            function_log = FunctionLog(
                self.settings.log_path, capture_descriptors=self.settings.capture_process_output
            )
            function_log.open(exit_stack)
            self.function_log = function_log
            exit_stack.callback(setattr, self, "function_log", None)
        functions = _functions(deployed)
        emulation.freeze_long_lived(exit_stack)  # the deployment; the Inits after each import

        def initialised() -> None:
            if function_log is not None:
                function_log.route_logging()  # the loggers the handler's module made
            emulation.freeze_long_lived()

        # Another release's code (a stack deployed from an earlier template) runs in
        # sandboxes that reach the emulation by its URL: only a served stack has them.
        sandboxes = Sandboxes(log=self.settings.log_path) if self.server_port is not None else None
        if sandboxes is not None:
            exit_stack.callback(sandboxes.stop)
        self.runtime = LambdaRuntime(
            self.template.handlers,
            functions=functions,
            failures=InvocationFailures(self.script, self.injector),
            timeout_override_s=self.settings.timeout_override_s,
            on_import=initialised,
            reserved_concurrency=reserved_concurrency(self.client("lambda"), functions),
            principals=self.access.principals if self.access else None,
            sandboxes=sandboxes,
            sandbox_environment=self._sandbox_environment,
        )
        patches.lambda_invoke.install(exit_stack, self.runtime)
        self.delivery = EventDelivery(
            self.client,
            state_machine_arn=self.outputs["StateMachineArn"],
            region=REGION,
            account=ACCOUNT,
            retry_visibility_s=self.settings.retry_visibility_s,
            schedules=self.settings.schedules,
            roles=self._roles_by_arn(deployed.attributes, functions),
            access=self.access,
            injector=self.injector,
            clock=self.clock,
            lifecycle=self.lifecycle,
            disabled_mappings=deployed.disabled_mappings,
        )
        exit_stack.callback(self.delivery.stop)
        self.delivery.start()
        webhooks = self.webhooks = WebhookDelivery(
            self.client,
            delay_scale=self.settings.retry_delay_scale,
            access=self.access,
            trusted_ca_file=self.settings.webhook_ca_file,
        )
        patches.api_destinations.install(exit_stack, webhooks.enqueue)
        exit_stack.callback(_stopped, webhooks)
        webhooks.start()

    # ---- strictness, injected faults and scripted failures -------------------------

    def _checks(self) -> list[Callable[[ServiceRequest], None]]:
        """The request gate's checks, in order: IAM first (a denial is the code's, never
        luck), then the injected faults."""
        checks: list[Callable[[ServiceRequest], None]] = []
        if self.access is not None:
            checks.append(self.access.check)
        if self.injector.enabled:
            checks.append(self._fault_check)
        return checks

    def _gated(self, access_key_id: str, invocation_id: str | None) -> bool:
        if self.access is not None and self.access.principal_signing(access_key_id):
            return True
        return self.injector.enabled and invocation_id is not None

    def _fault_check(self, request: ServiceRequest) -> None:
        own = callers.current().invocation
        on_own_thread = own is not None and own.id == request.invocation_id
        self.injector.check(request, on_own_thread=on_own_thread)

    def _enter_execution(self, role_arn: str, execution_input: Any) -> callers.Caller:
        """The caller an execution's task calls are (patches.execution_caller)."""
        key = self.injector.learn_job(execution_input)
        # Numbered among the executions of the same source key: run 1, 2, ...
        invocation = self.injector.begin(STATE_MACHINE_STAGE, key, "")
        principal = self.access.principal_for_role(role_arn) if self.access else None
        return callers.Caller(principal, invocation)

    def _leave_execution(self, caller: callers.Caller) -> None:
        if caller.invocation is not None:
            self.injector.end(caller.invocation)

    def _roles_by_arn(
        self, attributes: Mapping[str, Mapping[str, str]], functions: Mapping[str, str]
    ) -> dict[str, callers.Principal]:
        """Function ARN -> its execution role's principal (strict stacks)."""
        if self.access is None:
            return {}
        roles = {}
        for logical_id in functions.values():
            principal = self.access.principal(logical_id)
            arn = attributes.get(logical_id, {}).get("Arn")
            if principal is not None and arn:
                roles[arn] = principal
        return roles

    def _forget_clients(self) -> None:
        self._clients = None
        self._local = threading.local()

    def _scripted_send_failure(self, queue_name: str) -> ServiceError | None:
        """The scripted SendMessage failure for this queue, if any
        (``FailureScript.fail_sends``)."""
        logical_id = self._queues.get(queue_name)
        return self.script.take_send(logical_id) if logical_id else None

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

    @functools.cached_property
    def jobs_stream_arn(self) -> str:
        table = self.client("dynamodb").describe_table(TableName=self.outputs["JobsTableName"])
        return table["Table"]["LatestStreamArn"]

    def fire_schedules(self, at: datetime | None = None) -> int:
        """Fire every scheduled rule now, as EventBridge would at time ``at`` (default: now);
        the targets' invocations, retries and failure destinations are done on return.
        Returns how many rules fired."""
        assert self.delivery is not None, "the stack is not started"
        return self.delivery.fire_schedules(at)

    def apply_lifecycle(self, after: timedelta = timedelta()) -> list[Expired]:
        """Apply the buckets' lifecycle rules as S3 would ``after`` from the stack's
        clock's now (the clock itself stays); what they removed (their notifications are
        sent on return)."""
        return self.lifecycle.apply(at=self.clock.now() + after)

    def notifications_delivered(self) -> bool:
        """The notifier has handled every job record change written so far: the
        manifests and completion events of the jobs that ended are out."""
        assert self.delivery is not None, "the stack is not started"
        return self.delivery.streams_caught_up()

    @contextlib.contextmanager
    def queues_paused(self) -> Iterator[None]:
        """The SQS event sources receive nothing inside the block (as if their mappings
        were disabled): messages wait on their queues, in the order a test makes them."""
        assert self.delivery is not None, "the stack is not started"
        self.delivery.pause_queues(True)
        try:
            yield
        finally:
            self.delivery.pause_queues(False)

    def webhooks_delivered(self) -> bool:
        """Every event the bus's rules handed to an API destination so far has been
        delivered, dead-lettered or dropped (retries included)."""
        assert self.webhooks is not None, "the stack is not started"
        return self.webhooks.idle()

    @property
    def loop_errors(self) -> list[BaseException]:
        errors = self.delivery.errors if self.delivery is not None else []
        return errors + (self.webhooks.errors if self.webhooks is not None else [])

    def upload(
        self,
        path: Path,
        key: str | None = None,
        metadata: Mapping[str, str] | None = None,
        body: bytes | None = None,
    ) -> Upload:
        data = path.read_bytes() if body is None else body
        bucket = self.outputs["IngestBucketName"]
        return put_source(self.client("s3"), bucket, key or path.name, data, metadata)

    def wait_for_jobs(
        self,
        job_ids: Iterable[str],
        timeout_s: float = 300.0,
        on_progress: Callable[[Job], None] | None = None,
        on_open: Callable[[list[Progress]], None] | None = None,
    ) -> dict[str, Job | None]:
        """Wait until every job is terminal or the timeout passes; returns the records
        (None for a job that has none; a late job's record is not terminal).
        ``on_progress`` gets each job as it ends, ``on_open`` the progress of those still
        open after each poll.

        Each poll reads only the statuses and progress of the pending jobs written since
        the last one (the jobs table's stream says which: ``JobWrites``), and whole records
        only for jobs that just ended: with hundreds of jobs in flight, one request per job,
        or every pending job at each poll, was most of the waiting's cost. A poll follows a
        write to the jobs table (its stream has a record more), spaced by ``poll_spacing_s``
        of the jobs it waits for, or a second without one: never a poll that cannot find
        news. Raises ``EventLoopFailed`` as soon as an event loop fails (jobs could not
        progress).
        """
        pending = list(dict.fromkeys(job_ids))
        results: dict[str, Job | None] = dict.fromkeys(pending)
        progress: dict[str, Progress] = {}
        writes = JobWrites(ShardReader(self.jobs_stream_arn))  # before the first poll
        polling = list(pending)  # the first poll reads them all
        deadline = time.monotonic() + timeout_s
        while True:
            if self.loop_errors:
                raise EventLoopFailed(self.loop_errors)
            seen = appended.count  # before the poll: no write after it is missed
            polled = self.jobs.progress_of(polling)
            ended = [i for i, (status, _) in polled.items() if status.terminal]
            progress.update((i, now) for i, (_, now) in polled.items())
            for job_id, job in self.jobs.get_many(ended).items():
                results[job_id] = job
                pending.remove(job_id)
                del progress[job_id]
                if on_progress:
                    on_progress(job)
            if on_open:
                on_open([progress[i] for i in pending if i in progress])
            if not pending or time.monotonic() >= deadline:
                break
            polled_at = time.monotonic()
            appended.wait_past(seen, min(1.0, max(0.0, deadline - polled_at)))
            spacing_s = poll_spacing_s(len(pending))
            time.sleep(max(0.0, min(polled_at + spacing_s, deadline) - time.monotonic()))
            written = writes.since_last()
            polling = [i for i in pending if i in written]
        results.update(self.jobs.get_many(pending))  # the records of the late ones
        return results

    def artifact(self, key: str) -> bytes:
        return (
            self.client("s3")
            .get_object(Bucket=self.outputs["ArtifactBucketName"], Key=key)["Body"]
            .read()
        )


def _functions(deployed: Deployed) -> dict[str, str]:
    """The deployed functions: physical name -> logical id."""
    return {
        deployed.refs[lid]: lid
        for lid, kind in deployed.types.items()
        if kind == "AWS::Lambda::Function"
    }
