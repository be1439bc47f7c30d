"""The Lambda service as the embedded stack runs it: the handlers in-process (``lambdas``),
their output routed to the function log (``output``), and the deliveries AWS makes on its
own, a module each, each a thread (``loops``): a queue's messages to its function
(``sqs_messages``), a table's stream records to its function (``streams``), Step
Functions' execution status events (``status_events``), EventBridge's scheduled events
(``scheduled_events``), EventBridge's events to Lambda targets as asynchronous invocations
(``async_invocations``), the API destinations' webhooks (``webhooks``), the buckets'
lifecycle rules (``s3_lifecycle``); ``event_delivery`` runs them for a deployed stack.

Beside them: ``clock`` (the time the emulated services act on, which tests move),
``concurrency`` (reserved concurrency, an invocation beyond it throttled), ``job_writes``
(which jobs were written since the last look, from the table's stream),
``shard_reader`` (a DynamoDB stream's shard read as an event source mapping reads it),
and ``sandboxes`` with ``sandbox_child`` (functions whose code is another checkout's, each
invocation in a process of its own).
"""
