"""Error responses the embedded stack answers itself (an access denial, an injected
throttle, a validation AWS documents and moto lacks), in the shape each service's
protocol gives them, so that botocore parses the code, the message and the HTTP status
as it does on AWS (and retries 5xx and throttles as it does there).

Raised from inside moto's request handling as a werkzeug ``HTTPException``, which both
the in-process mode (moto's botocore stubber) and the served mode (Flask) turn into the
response.
"""

from __future__ import annotations

import json
from typing import Any
from xml.sax.saxutils import escape

from werkzeug.exceptions import HTTPException

# Services whose protocol is XML (rest-xml); every other service the stack uses is JSON.
XML_SERVICES = frozenset({"s3"})
# JSON services that are query-compatible: botocore reads the error code from this header.
QUERY_COMPATIBLE = frozenset({"sqs"})


class ServiceErrorResponse(HTTPException):
    """An AWS error response: HTTP ``status``, error ``code``, ``message``."""

    def __init__(self, service: str, status: int, code: str, message: str) -> None:
        self.service = service
        self.error_code = code
        self.message = message
        # moto answers an HTTPException its handlers raise with its description as the
        # body, so the description is the whole body.
        super().__init__(description=self._body())
        self.code = self.status = status

    def _body(self) -> str:
        if self.service in XML_SERVICES:
            return (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                f"<Error><Code>{escape(self.error_code)}</Code>"
                f"<Message>{escape(self.message)}</Message></Error>"
            )
        return json.dumps({"__type": self.error_code, "message": self.message})

    def get_body(self, *args: Any, **kwargs: Any) -> str:
        return self._body()

    def get_headers(self, *args: Any, **kwargs: Any) -> list[tuple[str, str]]:
        if self.service in XML_SERVICES:
            return [("Content-Type", "application/xml")]
        headers = [
            ("Content-Type", "application/x-amz-json-1.0"),
            ("x-amzn-ErrorType", self.error_code),
        ]
        if self.service in QUERY_COMPATIBLE:
            fault = "Receiver" if self.status >= 500 else "Sender"
            headers.append(("x-amzn-query-error", f"{self.error_code};{fault}"))
        return headers

    def __str__(self) -> str:
        return f"{self.error_code} ({self.status}): {self.message}"
