"""One boto3 client per region and service for the interpreter's Lambda tasks.

moto builds a new boto3 client for every Lambda task. Its arguments are fixed (moto's own
dummy credentials, the task's region; it ignores the state's credentials), and clients are
thread-safe, so one client per region and service serves every task.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from botocore.client import BaseClient

TARGET = (
    "moto.stepfunctions.parser.asl.component.state.exec.state_task.lambda_eval_utils"
    ".boto_client_for"
)
PATCHED = (TARGET,)

ClientFor = Callable[..., "BaseClient"]


class TaskClients:
    """Stands in for moto's ``boto_client_for`` in Lambda tasks."""

    def __init__(self, client_for: ClientFor) -> None:
        self.client_for = client_for
        self.clients: dict[tuple[str, str], BaseClient] = {}
        self.lock = threading.Lock()

    def __call__(self, region: str, service: str, state_credentials: Any = None) -> BaseClient:
        key = (region, service)
        with self.lock:
            client = self.clients.get(key)
            if client is None:
                client = self.clients[key] = self.client_for(
                    region=region, service=service, state_credentials=state_credentials
                )
        return client


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, TaskClients(original(TARGET)))
