"""moto_fixes.speed.attribute_values: a DynamoDB attribute value written by its wire format
in one pass, not walked member by member through moto's attribute picker; for any value
moto keeps, in any response that carries one, the bodies are identical to moto's."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from richdoc_tools.local.moto_fixes.speed import attribute_values
from richdoc_tools.local.patch_targets import original

NAMES = st.text(min_size=1, max_size=8)
SCALARS = st.one_of(
    st.builds(lambda s: {"S": s}, st.text(max_size=12)),
    st.builds(lambda n: {"N": str(n)}, st.integers() | st.decimals(allow_nan=False, places=3)),
    st.builds(lambda b: {"B": b}, st.binary(max_size=12)),
    st.builds(lambda ss: {"SS": ss}, st.lists(st.text(max_size=5), min_size=1, max_size=3)),
    st.builds(lambda ns: {"NS": [str(n) for n in ns]}, st.lists(st.integers(), min_size=1)),
    st.builds(lambda bs: {"BS": bs}, st.lists(st.binary(max_size=5), min_size=1, max_size=3)),
    st.just({"NULL": True}),
    st.builds(lambda b: {"BOOL": b}, st.booleans()),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.builds(lambda m: {"M": m}, st.dictionaries(NAMES, inner, max_size=4))
        | st.builds(lambda items: {"L": items}, st.lists(inner, max_size=4))
    ),
    max_leaves=20,
)
# Values moto's walk must take: a key that is no type tag, a None inside a list.
ODD = st.one_of(
    st.builds(lambda s: {"S": s, "Extra": s}, st.text(max_size=3)),
    st.just({"L": [None, {"S": "x"}]}),
    st.just({"M": {"gone": None, "kept": {"N": "1"}}}),
)
ITEMS = st.dictionaries(NAMES, VALUES | ODD, min_size=1, max_size=6)


def _bodies(operation: str, result: dict[str, Any]) -> str:
    from moto.core.serialize import JSONSerializer, XFormedAttributePicker
    from moto.core.utils import get_service_model

    service = "dynamodbstreams" if operation == "GetRecords" else "dynamodb"
    serializer = JSONSerializer(
        operation_model=get_service_model(service).operation_model(operation),
        pretty_print=False,
        value_picker=XFormedAttributePicker(),
    )
    return str(serializer.serialize(result)["body"])


def _results(item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    image = {"Keys": {"pk": {"S": "k"}}, "NewImage": item, "OldImage": item}
    return [
        ("GetItem", {"Item": item}),
        ("Query", {"Items": [item, item], "Count": 2, "ScannedCount": 2}),
        ("UpdateItem", {"Attributes": item}),
        ("BatchGetItem", {"Responses": {"t": [item]}, "UnprocessedKeys": {}}),
        ("GetRecords", {"Records": [{"eventName": "MODIFY", "dynamodb": image}]}),
    ]


def test_the_wire_format_is_the_attribute_value_shape_of_both_services() -> None:
    from moto.core.utils import get_service_model

    for service in ("dynamodb", "dynamodbstreams"):
        shape: Any = get_service_model(service).shape_for("AttributeValue")
        assert list(shape.members) == ["S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL"]


@settings(max_examples=150, deadline=None)
@given(ITEMS)
def test_every_response_carrying_attribute_values_is_byte_identical(item: dict[str, Any]) -> None:
    plain = [_bodies(op, result) for op, result in _results(item)]
    with contextlib.ExitStack() as exit_stack:
        attribute_values.install(exit_stack)
        assert isinstance(original(attribute_values.TARGET), attribute_values.AttributeValuesByWire)
        patched = [_bodies(op, result) for op, result in _results(item)]
    assert patched == plain


def test_plain_values_never_reach_moto_s_walk_and_odd_ones_always_do() -> None:
    walked: list[str] = []
    with contextlib.ExitStack() as exit_stack:
        attribute_values.install(exit_stack)
        by_wire = original(attribute_values.TARGET)
        walk = by_wire.structure

        def counting(serializer: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
            walked.append(shape.name)
            walk(serializer, serialized, value, shape, key)

        by_wire.structure = counting
        _bodies("GetItem", {"Item": {"a": {"M": {"b": {"L": [{"S": "x"}, {"B": b"y"}]}}}}})
        assert "AttributeValue" not in walked
        _bodies("GetItem", {"Item": {"a": {"S": "x", "Extra": "y"}}})
        assert walked.count("AttributeValue") == 1
