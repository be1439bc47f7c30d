"""Canary: every emulated DynamoDB request runs while its thread holds the stack's DynamoDB
lock (patches.dynamodb_lock)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any
from unittest import mock

import boto3
from richdoc_tools.local.emulation import DYNAMODB_LOCK
from richdoc_tools.local.patches import dynamodb_lock


def _lock_free_to_others_during_a_request() -> list[bool]:
    """For a GetItem: whether another thread could take the lock while moto's backend
    answered it."""
    from moto.dynamodb.models import DynamoDBBackend

    seen: list[bool] = []
    get_item: Callable[..., Any] = DynamoDBBackend.get_item

    def probing(backend: Any, *args: Any, **kwargs: Any) -> Any:
        def probe() -> None:
            taken = DYNAMODB_LOCK.acquire(blocking=False)
            seen.append(taken)
            if taken:
                DYNAMODB_LOCK.release()

        other = threading.Thread(target=probe)
        other.start()
        other.join()
        return get_item(backend, *args, **kwargs)

    ddb = boto3.client("dynamodb", region_name="us-east-1")
    ddb.create_table(
        TableName="t",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    with mock.patch.object(DynamoDBBackend, "get_item", probing):
        ddb.get_item(TableName="t", Key={"pk": {"S": "a"}})
    return seen


def test_with_the_patch_a_request_holds_the_lock_while_moto_answers_it(aws: None) -> None:
    with contextlib.ExitStack() as exit_stack:
        dynamodb_lock.install(exit_stack)
        assert _lock_free_to_others_during_a_request() == [False]


def test_without_the_patch_nothing_holds_it(aws: None) -> None:
    assert _lock_free_to_others_during_a_request() == [True]
