"""Who makes each AWS request, and the request as the stack's checks see it: the calling
thread's principal and invocation (``callers``), one request parsed from moto's own parse
(``service_request``), and the error responses the stack answers in each protocol's shape
(``service_errors``). The wings above decide on requests; this one only describes them."""
