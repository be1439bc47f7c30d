"""The moto, boto3 and Powertools internals the embedded stack replaces while it runs.

Each module here is one patch point: the ``TARGET`` it replaces (a dotted path; or adds,
``ADDED``, where moto lacks it), the replacement, why, and ``install(exit_stack, ...)``,
which patches it with ``unittest.mock`` on the stack's ``ExitStack``, so that
``EmbeddedStack.stop`` undoes every patch. moto is pinned exactly, and each patch point
has a canary test in a test module named after it
(``tests/aws/canaries/test_patch_<module>.py``) that fails loudly when an upgrade moves or
reshapes it.

The patch points are declared once, in groups the stack installs as a whole
(``install``): the ones that take nothing but the exit stack, in the order they go in,
and the ones the stack configures (``CONFIGURED``: each ``install`` takes what it needs
of the stack). Three of the emulation's exist because on AWS each invocation has its own
process, while here concurrent invocations are threads of one process: moto's DynamoDB
backend (``dynamodb_lock``), boto3's condition builder (``condition_builder``) and
Powertools' metric set (``metrics_lock``) raced under load (bench/, item 5: a burst of
200 uploads dead-lettered valid documents as internal failures, or crashed ``richdoc
run``).
"""

from __future__ import annotations

import contextlib
from typing import Protocol

from richdoc_tools.local.patches import (
    api_destinations,
    attribute_values,
    backend_urls,
    condition_builder,
    connection_secrets,
    definition_parse,
    dynamodb_action_counts,
    dynamodb_all_items,
    dynamodb_expression_copy,
    dynamodb_lock,
    dynamodb_projection,
    dynamodb_streams,
    dynamodb_transaction_rollback,
    dynamodb_transactions,
    dynamodb_traversal,
    dynamodb_update_parse,
    events_delivery,
    events_replay,
    events_sqs_policy,
    execution_caller,
    execution_history_pages,
    execution_status,
    json_paths,
    lambda_invoke,
    lambda_payload_size,
    lambda_task_errors,
    metrics_lock,
    redrive_execution,
    request_gate,
    request_signing,
    response_methods,
    retry_sleep,
    s3_delete_notifications,
    s3_key_length,
    s3_metadata_encoding,
    s3_missing_key,
    s3_notifications,
    s3_version_listing,
    s3_version_listing_encoding,
    sdk_retry_sleep,
    serializer_keys,
    sfn_input_size,
    sqs_message_arrivals,
    sqs_message_move_task,
    sqs_message_validation,
    sqs_send_failures,
    stack_templates,
    stop_execution,
    task_clients,
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


# What moto lacks or gets wrong, and what is not thread-safe in one process: every stack.
EMULATION: tuple[PlainPatchPoint, ...] = (
    definition_parse,
    task_clients,
    execution_status,
    s3_notifications,
    s3_delete_notifications,
    dynamodb_lock,
    dynamodb_streams,
    events_delivery,
    events_replay,
    metrics_lock,
    condition_builder,
    stop_execution,
    redrive_execution,
    execution_history_pages,
    sqs_message_arrivals,
    sqs_message_move_task,
    response_methods,
    backend_urls,
    json_paths,
    lambda_task_errors,
    connection_secrets,
    serializer_keys,
    attribute_values,
    dynamodb_projection,
    s3_version_listing,
    s3_version_listing_encoding,
    dynamodb_transaction_rollback,
    dynamodb_action_counts,
    dynamodb_expression_copy,
    dynamodb_all_items,
    dynamodb_traversal,
    dynamodb_update_parse,
)
# Who makes each request: signed as the calling thread's role, the threads a handler
# starts acting for it. Every stack: the injected faults decide on the invocation too.
CALLERS: tuple[PlainPatchPoint, ...] = (request_signing, thread_context)
# What AWS enforces and moto does not: its validations, the queue policies EventBridge's
# deliveries pass, S3's encoding of non-ASCII metadata (strict stacks;
# docs/embedded-stack.md).
VALIDATIONS: tuple[PlainPatchPoint, ...] = (
    sqs_message_validation,
    s3_key_length,
    lambda_payload_size,
    sfn_input_size,
    events_sqs_policy,
    s3_metadata_encoding,
)
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


PATCH_POINTS: tuple[PatchPoint, ...] = (*EMULATION, *CALLERS, *VALIDATIONS, *CONFIGURED)
# Every attribute a running stack has replaced, as dotted paths.
PATCHED = tuple(path for point in PATCH_POINTS for path in point.PATCHED)
# Of those, the ones moto lacks and a patch point adds (removed again when it stops).
ADDED = tuple(path for point in PATCH_POINTS for path in getattr(point, "ADDED", ()))
