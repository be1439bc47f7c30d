"""Every emulated AWS request passes the stack's checks before moto handles it.

moto parses every request of every service in ``BaseResponse.setup_class`` (S3's
override calls it first), in-process and served alike. Right after it, the gate builds
the request's ``ServiceRequest`` and runs the stack's checks in order (access control,
injected faults); a check raises the error response AWS would answer
(``service_errors.ServiceErrorResponse``), which moto's request handling returns as is.
Requests that concern no check (an operator's, with no invocation behind them) pass
without being parsed.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace
from richdoc_tools.local.requests.callers import INVOCATION_HEADER
from richdoc_tools.local.requests.service_request import ServiceRequest, from_moto

if TYPE_CHECKING:
    from moto.core.responses import BaseResponse

TARGET = "moto.core.responses.BaseResponse.setup_class"
PATCHED = (TARGET,)

Check = Callable[[ServiceRequest], None]
# (access key id, invocation id or None) -> does any check want to see the request?
Wanted = Callable[[str, "str | None"], bool]


def gated(
    setup: Callable[..., None], checks: Sequence[Check], wanted: Wanted
) -> Callable[..., None]:
    @functools.wraps(setup)
    def setup_and_check(self: BaseResponse, request: Any, *args: Any, **kwargs: Any) -> None:
        setup(self, request, *args, **kwargs)
        if not wanted(self.access_key, request.headers.get(INVOCATION_HEADER)):
            return
        service_request = from_moto(self)
        if service_request is None:
            return
        for check in checks:
            check(service_request)

    return setup_and_check


def install(exit_stack: contextlib.ExitStack, checks: Sequence[Check], wanted: Wanted) -> None:
    replace(exit_stack, TARGET, gated(original(TARGET), checks, wanted))
