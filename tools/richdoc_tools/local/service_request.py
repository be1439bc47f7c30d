"""One AWS request as the embedded stack's request gate sees it: the service and
operation, the parameters, and who sent it (the access key it was signed with, the
invocation it belongs to).

Built from moto's own parse of the request (``BaseResponse.setup_class``: headers,
body, query string) and botocore's operation router, so it works alike in-process and
served. Only the requests of functions and of the state machine's tasks are looked at
closely: parsing their parameters is deferred to first use.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree

from richdoc_tools.local.callers import INVOCATION_HEADER

if TYPE_CHECKING:
    from moto.core.responses import BaseResponse


@dataclass
class ServiceRequest:
    service: str  # boto3's name: s3, dynamodb, sqs, stepfunctions, lambda, ...
    operation: str  # the API operation: GetObject, UpdateItem, SendMessage, ...
    region: str
    access_key_id: str
    invocation_id: str | None
    method: str
    uri_params: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    @functools.cached_property
    def params(self) -> dict[str, Any]:
        """The request's parameters: a JSON protocol's body, else the URI's and the query
        string's (S3)."""
        if self.service != "s3" and self.body[:1] == b"{":
            parsed: dict[str, Any] = json.loads(self.body)
            return {**self.uri_params, **parsed}
        return {**self.uri_params, **self.query}

    def deleted_objects(self) -> list[tuple[str, str | None]]:
        """S3 DeleteObjects: the (key, version id) pairs its XML body lists."""
        root = ElementTree.fromstring(self.body)
        found = []
        for element in root.iter():
            if element.tag.rpartition("}")[2] != "Object":
                continue
            key = version = None
            for child in element:
                name = child.tag.rpartition("}")[2]
                if name == "Key":
                    key = child.text or ""
                elif name == "VersionId":
                    version = child.text
            if key is not None:
                found.append((key, version))
        return found


def from_moto(response: BaseResponse) -> ServiceRequest | None:
    """The request moto has just set ``response`` up for; None when no operation of the
    service's model matches it (moto's own endpoints, the dashboard)."""
    from moto.core.routing import get_service_router

    request = response.normalized_request
    try:
        operation, uri_params = get_service_router(response.boto3_service_name).match(request)
    except Exception:  # any miss of the router: not an API request
        return None
    raw = response.raw_body
    body = raw.encode() if isinstance(raw, str) else bytes(raw or b"")
    return ServiceRequest(
        service=response.boto3_service_name,
        operation=operation.name,
        region=response.region,
        access_key_id=response.access_key,
        invocation_id=request.headers.get(INVOCATION_HEADER),
        method=request.method,
        uri_params={k: str(v) for k, v in uri_params.items()},
        query={k: str(v) for k, v in request.args.items()},
        headers=dict(request.headers),
        body=body,
    )
