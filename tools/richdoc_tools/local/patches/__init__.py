"""The moto, boto3 and Powertools internals the embedded stack replaces while it runs.

Each module here is one patch point: the ``TARGET`` it replaces (a dotted path; or adds,
``ADDED``, where moto lacks it), the replacement, why, and ``install(exit_stack, ...)``,
which patches it with ``unittest.mock`` on the stack's ``ExitStack``, so that
``EmbeddedStack.stop`` undoes every patch. moto is pinned exactly, and each patch point
has a canary test in a test module named after it (``tests/aws/test_patch_<module>.py``)
that fails loudly when an upgrade moves or reshapes it.

Three of them exist because on AWS each invocation has its own process, while here
concurrent invocations are threads of one process: moto's DynamoDB backend
(``dynamodb_lock``), boto3's condition builder (``condition_builder``) and Powertools'
metric set (``metrics_lock``) raced under load (bench/, item 5: a burst of 200 uploads
dead-lettered valid documents as internal failures, or crashed ``richdoc run``).

The rest make the stack as strict as AWS (docs/embedded-stack.md): requests signed as
the calling thread's role (``request_signing``, ``thread_context``,
``execution_caller``), each checked by IAM and the injected faults (``request_gate``,
``s3_missing_key``), DynamoDB transaction conflicts (``dynamodb_transactions``), and
the validations moto lacks (``sqs_message_validation``, ``s3_key_length``,
``lambda_payload_size``, ``sfn_input_size``); ``sdk_retry_sleep`` scales botocore's retry back-off.
"""

from richdoc_tools.local.patches import (
    api_destinations,
    condition_builder,
    connection_secrets,
    definition_parse,
    dynamodb_lock,
    dynamodb_streams,
    dynamodb_transactions,
    events_delivery,
    execution_caller,
    execution_status,
    lambda_invoke,
    lambda_payload_size,
    metrics_lock,
    redrive_execution,
    request_gate,
    request_signing,
    retry_sleep,
    s3_delete_notifications,
    s3_key_length,
    s3_missing_key,
    s3_notifications,
    sdk_retry_sleep,
    sfn_input_size,
    sqs_message_validation,
    sqs_send_faults,
    stop_execution,
    task_clients,
    thread_context,
)

PATCH_POINTS = (
    lambda_invoke,
    retry_sleep,
    definition_parse,
    task_clients,
    execution_status,
    s3_notifications,
    s3_delete_notifications,
    dynamodb_lock,
    dynamodb_streams,
    events_delivery,
    api_destinations,
    condition_builder,
    metrics_lock,
    sqs_send_faults,
    stop_execution,
    redrive_execution,
    # What AWS enforces and moto does not (strict stacks; docs/embedded-stack.md).
    request_signing,
    thread_context,
    execution_caller,
    request_gate,
    s3_missing_key,
    dynamodb_transactions,
    sqs_message_validation,
    s3_key_length,
    lambda_payload_size,
    sfn_input_size,
    sdk_retry_sleep,
    connection_secrets,
)
# Every attribute a running stack has replaced, as dotted paths.
PATCHED = tuple(path for point in PATCH_POINTS for path in point.PATCHED)
# Of those, the ones moto lacks and a patch point adds (removed again when it stops).
ADDED = tuple(path for point in PATCH_POINTS for path in getattr(point, "ADDED", ()))
