"""Every AWS request signed as the thread that sends it acts (``callers``).

Handlers share module-level boto3 clients across functions (one process here, one
sandbox each on AWS), so the credentials cannot be the client's: botocore's
``RequestSigner.sign`` is wrapped to sign with the credentials of the calling thread's
principal (its role session, through botocore's own per-request credentials), and to
send the id of the invocation the call belongs to (``callers.INVOCATION_HEADER``).
An operator's thread signs with the client's own credentials, as before.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace
from richdoc_tools.local.requests import callers

if TYPE_CHECKING:
    from botocore.awsrequest import AWSRequest
    from botocore.signers import RequestSigner

TARGET = "botocore.signers.RequestSigner.sign"
PATCHED = (TARGET,)


def signing_as_caller(sign: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(sign)
    def sign_as_caller(
        self: RequestSigner, operation_name: str, request: AWSRequest, *args: Any, **kwargs: Any
    ) -> None:
        caller = callers.current()
        if caller.principal is not None:
            signing = dict(request.context.get("signing") or {})
            signing["request_credentials"] = caller.principal.credentials
            request.context["signing"] = signing
        if callers.INVOCATION_HEADER in request.headers:
            del request.headers[callers.INVOCATION_HEADER]  # a retry signs again
        if caller.invocation is not None:
            request.headers[callers.INVOCATION_HEADER] = caller.invocation.id
        sign(self, operation_name, request, *args, **kwargs)

    return sign_as_caller


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, signing_as_caller(original(TARGET)))
