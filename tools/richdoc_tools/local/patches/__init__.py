"""The embedded stack's own seams: where its runtime, its callers, its gate and its
locks enter moto, boto3 and Powertools while it runs.

Each module here is one patch point: the ``TARGET`` it replaces (a dotted path), the
replacement, why, and ``install(exit_stack, ...)``, which patches it with
``unittest.mock`` on the stack's ``ExitStack``, so that ``EmbeddedStack.stop`` undoes
every patch. moto is pinned exactly, and each patch point has a canary test in a test
module named after it (``tests/aws/canaries/test_patch_<module>.py``) that shows it
fires and fails when an upgrade moves or reshapes it.

A seam is permanent: it is how a stack of threads in one process stands in for Lambda's
processes, IAM's decisions and AWS's own deliveries, whatever moto does. Changes to
moto's own behaviour are not seams: they are debts to moto, in ``local.moto_fixes``.

The patch points are declared once, in groups the stack installs as a whole
(``install``): the ones that take nothing but the exit stack, in the order they go in,
and the ones the stack configures (``CONFIGURED``: each ``install`` takes what it needs
of the stack). Three exist because on AWS each invocation has its own process, while
here concurrent invocations are threads of one process: moto's DynamoDB backend
(``dynamodb_lock``), boto3's condition builder (``condition_builder``) and Powertools'
metric set (``metrics_lock``) raced under load (bench/, item 5: a burst of 200 uploads
dead-lettered valid documents as internal failures, or crashed ``richdoc run``).

The others, one a module (each replacing its target with ``local.patch_targets``):
``lambda_invoke`` (the stack's Lambda runtime runs function code, not
Docker), ``request_gate`` (every emulated request passes the stack's checks),
``request_signing`` (each request signed as its thread acts), ``thread_context``
(threads act for the thread that started them), ``execution_caller`` (an execution's task
calls are its role's), ``execution_ends`` (an execution's end announced to the status
events' loop), ``sqs_message_arrivals`` (a message wakes the queues' pollers),
``sqs_send_failures`` (scripted SendMessage failures), ``dynamodb_streams`` (stream
records kept for the stack's poller), ``dynamodb_transactions`` (the strict stack's
transaction conflicts), ``api_destinations`` (webhook delivery of API destination
targets), ``s3_missing_key`` (a missing key is 403 without ``s3:ListBucket``),
``stack_templates`` (GetTemplate answers the template as deployed), ``retry_sleep`` and
``sdk_retry_sleep`` (the state machine's and botocore's retry intervals, scaled).
"""

from __future__ import annotations

import contextlib
from typing import Protocol

from richdoc_tools.local.patches import (
    api_destinations,
    condition_builder,
    dynamodb_lock,
    dynamodb_streams,
    dynamodb_transactions,
    execution_caller,
    execution_ends,
    lambda_invoke,
    metrics_lock,
    request_gate,
    request_signing,
    retry_sleep,
    s3_missing_key,
    sdk_retry_sleep,
    sqs_message_arrivals,
    sqs_send_failures,
    stack_templates,
    thread_context,
)


class PatchPoint(Protocol):
    """A patch point module: its name, and the attributes it replaces."""

    @property
    def __name__(self) -> str: ...

    @property
    def PATCHED(self) -> tuple[str, ...]: ...


class PlainPatchPoint(PatchPoint, Protocol):
    """A patch point whose ``install`` takes only the stack's exit stack."""

    def install(self, exit_stack: contextlib.ExitStack) -> None: ...


# What a stack of threads in one process needs (thread safety, the stream's records kept
# for the stack's poller, the wakes of its event loops): every stack.
EMULATION: tuple[PlainPatchPoint, ...] = (
    dynamodb_lock,
    dynamodb_streams,
    metrics_lock,
    condition_builder,
    sqs_message_arrivals,
    execution_ends,
)
# Who makes each request: signed as the calling thread's role, the threads a handler
# starts acting for it. Every stack: the injected faults decide on the invocation too.
CALLERS: tuple[PlainPatchPoint, ...] = (request_signing, thread_context)
# The patch points the stack configures as it starts (the template GetTemplate answers,
# retry scales, the state machine's caller, the transaction conflicts, the IAM gate and
# missing-key denials, the scripted SendMessage failures, the Lambda runtime, the API
# destinations' delivery).
CONFIGURED: tuple[PatchPoint, ...] = (
    stack_templates,
    retry_sleep,
    sdk_retry_sleep,
    execution_caller,
    dynamodb_transactions,
    s3_missing_key,
    request_gate,
    sqs_send_failures,
    lambda_invoke,
    api_destinations,
)


def install(exit_stack: contextlib.ExitStack, group: tuple[PlainPatchPoint, ...]) -> None:
    """Install every patch point of ``group``, in order, until ``exit_stack`` closes."""
    for point in group:
        point.install(exit_stack)


PATCH_POINTS: tuple[PatchPoint, ...] = (*EMULATION, *CALLERS, *CONFIGURED)
# Every attribute a running stack has replaced, as dotted paths.
PATCHED = tuple(path for point in PATCH_POINTS for path in point.PATCHED)
