"""A GET or HEAD of a missing S3 key answers 403 AccessDenied to a caller without
``s3:ListBucket`` on the bucket, as S3 does (the GetObject and HeadObject pages of the S3
API reference, "Permissions"); moto always answers 404.

moto's ``S3Response.key_response`` handles every object request; its 404 for a missing
key or version (``NoSuchKey``, ``NoSuchVersion``, or a HEAD's empty 404) becomes the
403 when the access control says the signer lacks ``s3:ListBucket``. A missing bucket
stays 404.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.s3.responses import S3Response

    from richdoc_tools.local.requests.service_errors import ServiceErrorResponse

TARGET = "moto.s3.responses.S3Response.key_response"
PATCHED = (TARGET,)

Response = tuple[int, dict[str, Any], Any]
# (access key id, bucket) -> the denial to answer instead of a 404, or None
DenialFor = Callable[[str, str], "ServiceErrorResponse | None"]


def denying_missing_keys(
    key_response: Callable[..., Response], denial_for: DenialFor
) -> Callable[..., Response]:
    @functools.wraps(key_response)
    def key_response_or_denial(
        self: S3Response, request: Any, *args: Any, **kwargs: Any
    ) -> Response:
        status, headers, body = key_response(self, request, *args, **kwargs)
        if status != 404 or request.method not in ("GET", "HEAD"):
            return status, headers, body
        text = body.decode(errors="replace") if isinstance(body, bytes) else str(body or "")
        if "NoSuchBucket" in text or self.bucket_name not in self.backend.buckets:
            return status, headers, body
        denial = denial_for(self.access_key, self.bucket_name)
        if denial is None:
            return status, headers, body
        answer = "" if request.method == "HEAD" else denial.get_body()
        return denial.status, dict(denial.get_headers()), answer

    return key_response_or_denial


def install(exit_stack: contextlib.ExitStack, denial_for: DenialFor) -> None:
    replace(exit_stack, TARGET, denying_missing_keys(original(TARGET), denial_for))
