"""Which user metadata and tags travel with a source's results (richdoc.metadata)."""

from __future__ import annotations

from richdoc.metadata import passed_through


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
