"""User text in AWS string fields (richdoc.awstext): whatever an object key holds, a
dead-letter message's attributes are values SQS accepts, and its body stays the exact
ingest message."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from richdoc.awstext import CUT_MARK, fit_chars, sqs_string, xml_chars
from richdoc.deadletter import MAX_ATTRIBUTE_BYTES, failure_attributes
from richdoc.taxonomy import Failure, FailureKind
from tests.support.s3_events import s3_notification

# What SQS accepts in a message body and a String attribute value (SendMessage).
SQS_CHARS = re.compile("[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")
# Every code point, lone surrogates and noncharacters included.
ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=3000)


def _valid_sqs_value(value: str, max_bytes: int) -> bool:
    return SQS_CHARS.fullmatch(value) is not None and 0 < len(value.encode("utf-8")) <= max_bytes


@given(ANY_TEXT.filter(bool), st.integers(min_value=len(CUT_MARK) + 1, max_value=5000))
def test_any_text_becomes_a_valid_sqs_string_value(text: str, max_bytes: int) -> None:
    assert _valid_sqs_value(sqs_string(text, max_bytes), max_bytes)


ACCEPTED_TEXT = st.text(
    st.characters(codec="utf-8").filter(lambda c: SQS_CHARS.fullmatch(c) is not None),
    max_size=300,
)


@given(ACCEPTED_TEXT)
def test_text_sqs_accepts_is_kept_as_it_is(text: str) -> None:
    assert sqs_string(text, 4 * 300) == text  # 4 bytes a character at most


def test_refused_characters_are_spelled_out_and_a_long_value_is_cut_and_marked() -> None:
    assert xml_chars("a\x01b\x1fc\td\ud800e\ufffef") == "a\\x01b\\x1fc\td\\ud800e\\ufffef"
    long = "é" * 600  # 1,200 bytes
    cut = sqs_string(long, 1000)
    assert cut.endswith(CUT_MARK) and len(cut.encode()) <= 1000
    assert cut[:-3] == "é" * 498  # never half a character
    assert fit_chars("x" * 40000, 32768) == "x" * 32765 + CUT_MARK


@given(key=ANY_TEXT.filter(bool), feature=ANY_TEXT)
def test_a_dead_letter_for_any_key_has_valid_attributes(key: str, feature: str) -> None:
    failure = Failure(
        kind=FailureKind.UNSUPPORTED_FEATURE,
        reason=f"s3://ingest/{key} is not a document",
        feature=feature or None,
        error="UnsupportedFeature",
    )
    attributes = failure_attributes("0123abcd" * 4, 2, failure)
    for attribute in attributes.values():
        assert _valid_sqs_value(attribute["StringValue"], MAX_ATTRIBUTE_BYTES)
    assert attributes["richdoc.run"] == {"DataType": "Number", "StringValue": "2"}
    total = sum(
        len(n) + len(a["DataType"]) + len(a["StringValue"].encode()) for n, a in attributes.items()
    )
    assert total < 4096


def test_a_key_with_a_control_character_keeps_its_body_exact_and_says_it_in_the_reason() -> None:
    key = "report\x01final.pdf"
    body = s3_notification(key.replace("\x01", "%01"))  # S3 URL-encodes keys
    failure = Failure(FailureKind.CORRUPT_INPUT, f"source object s3://ingest/{key} is broken")
    reason = failure_attributes("job", 1, failure)["richdoc.reason"]["StringValue"]
    assert reason == "source object s3://ingest/report\\x01final.pdf is broken"
    assert SQS_CHARS.fullmatch(body) and json.loads(body)  # the body needs nothing
