"""Who makes an AWS call in the embedded stack, and on behalf of which invocation.

On AWS each function's calls are signed with its execution role's temporary credentials,
and Step Functions calls a task's API with the state machine's role. Here every handler
shares one process (and the boto3 clients of ``richdoc.wiring``, which every function
uses), so the principal is a property of the *thread*: the Lambda runtime sets it on the
thread a handler runs on, the state machine's interpreter on its execution's thread, and
the request signer (``patches.request_signing``) signs each request with the credentials of
the thread that sends it. Threads a handler starts (s3transfer's pool, a
``ThreadPoolExecutor``, a plain ``Thread``) act for the thread that started them
(``patches.thread_context``). A thread with no caller set is an operator: the tests'
own clients, the AWS CLI against ``richdoc local serve``, the stack's deployment.

A ``Caller`` also names the invocation it belongs to (``Invocation``), which the fault
injector and the transaction holds decide on; the signer sends its id in a request
header, so the served emulation (another thread) knows it too.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from botocore.credentials import Credentials

# The request header that carries the invocation a request belongs to (emulation only:
# moto ignores unknown headers, and the stack's request gate reads it).
INVOCATION_HEADER = "x-richdoc-invocation"


@dataclass(frozen=True)
class Principal:
    """An IAM role's session: what AssumeRole gave the stack for one function or the
    state machine."""

    name: str  # the logical id of the function or state machine it acts for
    role_arn: str
    session_arn: str  # arn:aws:sts::<account>:assumed-role/<role>/<session>
    access_key_id: str
    credentials: Credentials = field(compare=False, repr=False)


@dataclass(frozen=True)
class Invocation:
    """One run of a function (or one execution's own task calls) as the fault injector
    sees it: what it works on, never anything random (version ids, request ids)."""

    id: str
    stage: str  # the function's logical id (with the records action), or "StateMachine"
    key: str  # the source object's key ("" when the event names none)
    pages: str  # a shard's page range, "" for a whole document
    attempt: int  # 1 for the first invocation of this (stage, key, pages), 2 for the next...


@dataclass(frozen=True)
class Caller:
    principal: Principal | None
    invocation: Invocation | None = None


OPERATOR = Caller(None)

_local = threading.local()
# The attribute a started thread carries its starter's caller in (patches.thread_context).
INHERITED = "_richdoc_caller"


def current() -> Caller:
    """The caller this thread acts as: set on it, else inherited from the thread that
    started it, else an operator."""
    caller: Caller | None = getattr(_local, "caller", None)
    if caller is None:
        caller = getattr(threading.current_thread(), INHERITED, None)
    return caller or OPERATOR


@contextlib.contextmanager
def acting_as(caller: Caller) -> Iterator[None]:
    """This thread's AWS calls are ``caller``'s inside the block."""
    previous = getattr(_local, "caller", None)
    _local.caller = caller
    try:
        yield
    finally:
        _local.caller = previous
