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

from richdoc_tools.local.requests.callers import INVOCATION_HEADER

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


# Object requests whose operation the method alone names, when the query string names
# no sub-resource (the common requests of the pipeline; anything else goes to the router).
S3_OBJECT_OPERATIONS = {
    "GET": "GetObject",
    "HEAD": "HeadObject",
    "PUT": "PutObject",
    "DELETE": "DeleteObject",
}
S3_PLAIN_QUERY = frozenset({"versionId", "x-id"})


def _operation(response: BaseResponse, request: Any) -> tuple[str, dict[str, Any]] | None:
    """(operation, URI parameters) of the request, or None when no operation matches.

    JSON protocols name the operation in ``X-Amz-Target``; a plain S3 object request is
    named by its method; the rest go through moto's operation router (the costly way)."""
    target = request.headers.get("X-Amz-Target")
    if target:
        return target.rsplit(".", 1)[-1], {}
    if response.boto3_service_name == "s3" and set(request.args) <= S3_PLAIN_QUERY:
        found = _s3_object_operation(response, request)
        if found is not None:
            return found
    return routed(response, request)


def routed(response: BaseResponse, request: Any) -> tuple[str, dict[str, Any]] | None:
    """(operation, URI parameters) as moto's router of the service's model finds them."""
    from moto.core.routing import get_service_router

    try:
        operation, uri_params = get_service_router(response.boto3_service_name).match(request)
    except Exception:  # any miss of the router: not an API request
        return None
    return operation.name, dict(uri_params)


def _s3_object_operation(response: Any, request: Any) -> tuple[str, dict[str, Any]] | None:
    from moto.s3.responses import S3Response, parse_key_name
    from moto.s3bucket_path.utils import parse_key_name as bucketpath_parse_key_name

    operation = S3_OBJECT_OPERATIONS.get(request.method)
    if operation is None or "x-amz-copy-source" in request.headers:
        return None
    bucket = response.parse_bucket_name_from_url(request, request.raw_url)
    path = response.get_safe_path()
    if S3Response.subdomain_based_buckets(request):
        key = parse_key_name(path)
    else:
        key = bucketpath_parse_key_name(path)
    if not bucket or not key:
        return None
    return operation, {"Bucket": bucket, "Key": key}


def from_moto(response: BaseResponse) -> ServiceRequest | None:
    """The request moto has just set ``response`` up for; None when no operation of the
    service's model matches it (moto's own endpoints, the dashboard)."""
    request = response.normalized_request
    found = _operation(response, request)
    if found is None:
        return None
    operation, uri_params = found
    raw = response.raw_body
    body = raw.encode() if isinstance(raw, str) else bytes(raw or b"")
    return ServiceRequest(
        service=response.boto3_service_name,
        operation=operation,
        region=response.region,
        access_key_id=response.access_key,
        invocation_id=request.headers.get(INVOCATION_HEADER),
        method=request.method,
        uri_params={k: str(v) for k, v in uri_params.items()},
        query={k: str(v) for k, v in request.args.items()},
        headers=dict(request.headers),
        body=body,
    )
