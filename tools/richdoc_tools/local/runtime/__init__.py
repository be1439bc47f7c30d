"""The Lambda service as the embedded stack runs it: the handlers in-process (``lambdas``),
their output routed to the function log (``output``), and the deliveries AWS makes on its
own, each a thread (``loops``): the SQS event sources, execution status events,
asynchronous invocations and schedules (``events``), the DynamoDB stream poller
(``streams``)."""
