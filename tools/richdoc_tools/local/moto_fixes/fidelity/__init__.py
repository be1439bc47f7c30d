"""Where stock moto is kinder than AWS, or answers otherwise, made to behave as AWS
documents (see ``richdoc_tools.local.moto_fixes``; docs/moto-fixes.md lists them).

Each module has ``PATCHED`` (the dotted paths it replaces; ``ADDED``, those moto lacks)
and ``install(exit_stack, ...)``. Three groups, installed in order on the stack's
``ExitStack``: ``EVERY_STACK`` (what the pipeline's behaviour depends on, lenient stacks
included), ``STRICT`` (AWS's refusals and guarantees, the strict stack's rules:
docs/embedded-stack.md) and ``CONFIGURED`` (installed by a strict stack given what they
need: ``dynamodb_index_lag``, with ``StackSettings(index_lag=...)``, which injected faults
turn on). ``FIXES`` is every fix.

The fixes, one a module:

* ``connection_secrets``: DescribeConnection answers without the connection's secrets.
* ``dynamodb_client_tokens``: a TransactWriteItems repeated with its token changes nothing.
* ``dynamodb_gsi_updates``: UpdateTable creates or deletes at most one index.
* ``events_delivery``: a target without a transform receives the event whole, as put.
* ``events_replay``: StartReplay replays the archived events to the rules it names.
* ``events_sqs_policy``: EventBridge delivers to a queue only what its policy allows.
* ``execution_history_pages``: GetExecutionHistory answers in pages and in either order.
* ``execution_status``: an execution still starting is listed RUNNING.
* ``lambda_payload_size``: Lambda's payload quotas on Invoke requests.
* ``lambda_task_errors``: a Lambda task whose Invoke is refused fails with
  ``Lambda.<error code>``.
* ``redrive_execution``: RedriveExecution answered as Step Functions answers it.
* ``s3_delete_notifications``: each delete of a versioned object is notified.
* ``s3_key_length``: S3 refuses a key over 1,024 bytes of UTF-8.
* ``s3_metadata_encoding``: non-ASCII user metadata returned RFC 2047-encoded.
* ``s3_notifications``: a versioned bucket's notification carries the version id.
* ``s3_version_listing_encoding``: ListObjectVersions honours ``EncodingType=url``.
* ``sfn_input_size``: StartExecution refuses an input over 256 KiB.
* ``sqs_message_move_task``: SQS message move tasks (DLQ redrive), run as SQS runs them.
* ``sqs_message_validation``: SendMessage refuses what SQS refuses.
* ``stop_execution``: StopExecution aborts the execution at once.
"""

from __future__ import annotations

import contextlib

from richdoc_tools.local.moto_fixes.fidelity import (
    connection_secrets,
    dynamodb_client_tokens,
    dynamodb_gsi_updates,
    dynamodb_index_lag,
    events_delivery,
    events_replay,
    events_sqs_policy,
    execution_history_pages,
    execution_status,
    lambda_payload_size,
    lambda_task_errors,
    redrive_execution,
    s3_delete_notifications,
    s3_key_length,
    s3_metadata_encoding,
    s3_notifications,
    s3_version_listing_encoding,
    sfn_input_size,
    sqs_message_move_task,
    sqs_message_validation,
    stop_execution,
)
from richdoc_tools.local.patches import PatchPoint, PlainPatchPoint

EVERY_STACK: tuple[PlainPatchPoint, ...] = (
    execution_status,
    stop_execution,
    redrive_execution,
    execution_history_pages,
    lambda_task_errors,
    s3_notifications,
    s3_delete_notifications,
    s3_version_listing_encoding,
    events_delivery,
    events_replay,
    connection_secrets,
    sqs_message_move_task,
)
STRICT: tuple[PlainPatchPoint, ...] = (
    dynamodb_gsi_updates,
    dynamodb_client_tokens,
    sqs_message_validation,
    s3_key_length,
    lambda_payload_size,
    sfn_input_size,
    events_sqs_policy,
    s3_metadata_encoding,
)
CONFIGURED: tuple[PatchPoint, ...] = (dynamodb_index_lag,)
FIXES: tuple[PatchPoint, ...] = (*EVERY_STACK, *STRICT, *CONFIGURED)


def install(exit_stack: contextlib.ExitStack, group: tuple[PlainPatchPoint, ...]) -> None:
    """Install every fix of ``group``, in order, until ``exit_stack`` closes."""
    for fix in group:
        fix.install(exit_stack)
