"""Canary: moto parses an UpdateItem's expression twice and a transaction's update once
more, and only reads the tree it parses (its validator works on a deep copy); the patch
(moto_fixes.speed.dynamodb_update_parse) hands out one tree per expression text, and every update,
alone or in a transaction, leaves the item and the error moto's own parse gives, and the
kept tree as it was parsed."""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import Iterator
from typing import Any

import boto3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws
from richdoc_tools.local.moto_fixes.speed import dynamodb_update_parse

from tests.support.update_expressions import EXPRESSIONS, tree_shape

# moto's parsing modules opt out of type checking: their classes are Any here.
PARSER: Any = importlib.import_module("moto.dynamodb.parsing.expressions")
NAMES = {"#a": "a", "#b": "b", "#c": "c"}
VALUES = {":v": {"N": "1"}, ":w": {"S": "two"}, ":x": {"L": [{"N": "3"}]}}
ITEM: dict[str, Any] = {
    "pk": {"S": "k"},
    "a": {"N": "5"},
    "d": {"S": "dee"},
    "g": {"L": [{"N": "1"}]},
}


def test_moto_only_reads_the_tree_it_parses_and_validates_a_copy() -> None:
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.parsing.validators import Validator
    from moto.dynamodb.responses import DynamoHandler

    assert dynamodb_update_parse.TARGET == (
        "moto.dynamodb.parsing.expressions.UpdateExpressionParser.make"
    )
    assert isinstance(vars(PARSER.UpdateExpressionParser)["make"], classmethod)
    assert "self.node_to_validate = deepcopy(expression)" in inspect.getsource(Validator.__init__)
    for method in (DynamoHandler.update_item, DynamoHandler.transact_write_items):
        source = inspect.getsource(method)
        # The handler's tree: searched for the placeholders it uses, nothing else.
        uses = source.split("update_expression_ast")[1:]
        assert uses and all(
            use.startswith((" = UpdateExpressionParser.make(", ".find_clauses(")) for use in uses
        ), method
    backend = inspect.getsource(DynamoDBBackend.update_item)
    uses = backend.split("update_expression_ast")[1:]
    assert len(uses) == 3 and uses[0].startswith(" = UpdateExpressionParser.make(")
    assert all(use.startswith(",\n") for use in uses[1:])  # each the validator's first argument


@contextlib.contextmanager
def moto_dynamodb(patched: bool) -> Iterator[Any]:
    with mock_aws(), contextlib.ExitStack() as exit_stack:
        if patched:
            dynamodb_update_parse.install(exit_stack)
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="t",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        client.put_item(TableName="t", Item=ITEM)
        yield client


def _updated(client: Any, expression: str, transaction: bool) -> Any:
    update = {
        "TableName": "t",
        "Key": {"pk": {"S": "k"}},
        "UpdateExpression": expression,
        "ExpressionAttributeNames": {n: v for n, v in NAMES.items() if n in expression},
        "ExpressionAttributeValues": {n: v for n, v in VALUES.items() if n in expression},
    }
    if not update["ExpressionAttributeValues"]:
        del update["ExpressionAttributeValues"]
    try:
        if transaction:
            client.transact_write_items(TransactItems=[{"Update": update}])
        else:
            client.update_item(**update)
    except client.exceptions.ClientError as error:
        return error.response["Error"]
    return client.get_item(TableName="t", Key={"pk": {"S": "k"}})["Item"]


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(EXPRESSIONS, min_size=1, max_size=3), st.booleans())
def test_updates_leave_moto_s_item_or_error_and_the_kept_tree_unchanged(
    expressions: list[str], transaction: bool
) -> None:
    parse = PARSER.UpdateExpressionParser.make  # moto's own
    with moto_dynamodb(patched=False) as client:
        expected = [_updated(client, e, transaction) for e in expressions * 2]
    with moto_dynamodb(patched=True) as client:
        assert [_updated(client, e, transaction) for e in expressions * 2] == expected
        for expression in expressions:
            kept = PARSER.UpdateExpressionParser.make(expression)
            assert PARSER.UpdateExpressionParser.make(expression) is kept
            assert tree_shape(kept, {}) == tree_shape(parse(expression), {})


def test_an_expression_moto_refuses_is_refused_every_time() -> None:
    with moto_dynamodb(patched=True) as client:
        for _ in range(2):
            error = _updated(client, "SET #a = :v SET #b = :w", transaction=False)
            assert error["Code"] == "ValidationException", error
