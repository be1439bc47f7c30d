"""The Lambda service as the embedded stack runs it: the handlers in-process (``lambdas``),
their output routed to the function log (``output``), and the deliveries AWS makes on its
own, a module each, each a thread (``loops``): a queue's messages to its function
(``sqs_messages``), a table's stream records to its function (``streams``), Step
Functions' execution status events (``status_events``), EventBridge's scheduled events
(``scheduled_events``), EventBridge's events to Lambda targets as asynchronous invocations
(``async_invocations``), the API destinations' webhooks (``webhooks``), the buckets'
lifecycle rules (``s3_lifecycle``); ``event_delivery`` runs them for a deployed stack."""
