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
"""

from richdoc_tools.local.patches import (
    condition_builder,
    definition_parse,
    dynamodb_lock,
    execution_status,
    lambda_invoke,
    metrics_lock,
    redrive_execution,
    retry_sleep,
    s3_delete_notifications,
    s3_notifications,
    sqs_send_faults,
    stop_execution,
    task_clients,
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
    condition_builder,
    metrics_lock,
    sqs_send_faults,
    stop_execution,
    redrive_execution,
)
# Every attribute a running stack has replaced, as dotted paths.
PATCHED = tuple(path for point in PATCH_POINTS for path in point.PATCHED)
# Of those, the ones moto lacks and a patch point adds (removed again when it stops).
ADDED = tuple(path for point in PATCH_POINTS for path in getattr(point, "ADDED", ()))
