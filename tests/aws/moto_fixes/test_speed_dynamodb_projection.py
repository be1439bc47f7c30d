"""Canary: moto converts the whole item once per projected path (``Item.project``); the
patch (moto_fixes.speed.dynamodb_projection) converts only the named top-level attributes, and
every projection answers exactly what moto's answers."""

from __future__ import annotations

import contextlib
import inspect
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from richdoc_tools.local.moto_fixes.speed import dynamodb_projection
from richdoc_tools.local.patches.target import original

NAMES = st.sampled_from(["job_id", "job_status", "phase", "tiers", "a", "b"])
LEAVES = st.one_of(
    st.text(max_size=6),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.booleans(),
    st.none(),
    st.binary(max_size=4),
    st.sets(st.text(min_size=1, max_size=3), min_size=1, max_size=3),
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=10,
)
PATHS = st.lists(
    st.one_of(
        st.builds(lambda n: [n], NAMES),
        st.builds(lambda n, m: [n, m], NAMES, NAMES),
        st.builds(lambda n, i: [f"{n}[{i}]"], NAMES, st.integers(0, 2)),
    ),
    min_size=1,
    max_size=5,
)


def _item(values: dict[str, Any]) -> Any:
    from boto3.dynamodb.types import TypeSerializer
    from moto.dynamodb.models.dynamo_type import DynamoType, Item

    attrs: dict[str, Any] = {"pk": {"S": "job#1"}, **TypeSerializer().serialize(values)["M"]}
    return Item(hash_key=DynamoType({"S": "job#1"}), range_key=None, attrs=attrs)


def _projected(values: dict[str, Any], paths: list[list[str]]) -> Any:
    """The projected item, or the error moto raises (a path into a number, say)."""
    try:
        return _item(values).project(paths).to_json()
    except Exception as error:
        return type(error)


def test_moto_converts_the_whole_item_for_every_path() -> None:
    from moto.dynamodb.models.dynamo_type import Item

    assert dynamodb_projection.TARGET == "moto.dynamodb.models.dynamo_type.Item.project"
    source = inspect.getsource(Item.project)
    assert "for expr in projection_expressions:" in source
    assert "find_nested_key(expr, self.to_regular_json())" in source


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(NAMES, VALUES, max_size=6), PATHS)
def test_every_projection_answers_what_moto_answers(
    values: dict[str, Any], paths: list[list[str]]
) -> None:
    plain = _projected(values, paths)
    with contextlib.ExitStack() as exit_stack:
        dynamodb_projection.install(exit_stack)
        assert isinstance(
            original(dynamodb_projection.TARGET), dynamodb_projection.TopLevelProjection
        )
        patched = _projected(values, paths)
    assert patched == plain


def test_only_distinct_top_level_names_take_the_short_way() -> None:
    names = dynamodb_projection.top_level_names
    assert names([["job_id"], ["job_status"]]) == ["job_id", "job_status"]
    assert names([["job_id"], ["job_id"]]) is None
    assert names([["tiers", "tier"]]) is None
    assert names([["tiers[0]"]]) is None
