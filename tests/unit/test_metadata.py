"""Which user metadata and tags travel with a source's results, and how (richdoc.metadata)."""

from __future__ import annotations

import base64

from hypothesis import given
from hypothesis import strategies as st

from richdoc.metadata import decoded_value, passed_through


def test_only_names_with_the_prefix_travel_metadata_and_tags_alike() -> None:
    metadata = {"richdoc-tenant": "acme", "owner": "bob", "richdoc-clarify": "true"}
    tags = [("richdoc-team", "legal"), ("cost-centre", "42")]
    assert passed_through(metadata, tags, "richdoc-") == {
        "richdoc-clarify": "true",
        "richdoc-team": "legal",
        "richdoc-tenant": "acme",
    }


def test_a_name_that_is_both_keeps_the_metadata_value() -> None:
    assert passed_through({"app-x": "meta"}, [("app-x", "tag")], "app-") == {"app-x": "meta"}


def test_an_empty_prefix_passes_nothing() -> None:
    assert passed_through({"a": "1"}, [("b", "2")], "") == {}


def test_tags_are_matched_as_written() -> None:
    """S3 stores metadata names in lower case; tag keys keep their case."""
    assert passed_through({}, [("Richdoc-Team", "x")], "richdoc-") == {}


def test_metadata_values_arrive_decoded_as_the_uploader_wrote_them() -> None:
    """S3 returns a non-ASCII metadata value RFC 2047-encoded; a rule on the plain value
    must match, so the job record holds the text itself. Tags come back as UTF-8."""
    encoded = "=?UTF-8?B?" + base64.b64encode("Zoë & Café 東京".encode()).decode() + "?="
    quoted = "=?utf-8?q?caf=C3=A9?="
    kept = passed_through(
        {"richdoc-owner": encoded, "richdoc-site": quoted, "richdoc-plain": "a =? b"},
        [("richdoc-team", "Équipe")],
        "richdoc-",
    )
    assert kept == {
        "richdoc-owner": "Zoë & Café 東京",
        "richdoc-plain": "a =? b",
        "richdoc-site": "café",
        "richdoc-team": "Équipe",
    }


@given(st.text(min_size=1, max_size=200).filter(lambda text: not text.isascii()))
def test_any_value_s3_encodes_comes_back_as_it_was(text: str) -> None:
    encoded = "=?UTF-8?B?" + base64.b64encode(text.encode()).decode() + "?="
    assert decoded_value(encoded) == text


def test_a_malformed_encoded_word_is_kept_as_it_is() -> None:
    for value in ("=?UTF-8?B?!!!?=", "=?x-unknown?B?AAAA?=", "=?UTF-8?Q?"):
        assert decoded_value(value) == value
