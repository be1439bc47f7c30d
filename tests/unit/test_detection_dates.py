"""richdoc.detection.dates: the date forms contracts-v2 reads (docs/detection.md,
"contracts-v2: dates"), one form or rule per test."""

from __future__ import annotations

import re._parser
from datetime import date

import pytest

from richdoc.detection.dates import (
    DATE_LEAD,
    DATE_PATTERN,
    DATE_WIDTH,
    DateForm,
    Numeric,
    SlashOrder,
    find,
    legend_order,
    two_digit_year,
)


def read(text: str) -> list[tuple[str, date | None]]:
    """Every date of ``text``: as written, and its value (None: a slash or dash date,
    read later by the document's convention)."""
    return [(text[f.start : f.end], f.value) for f in find(text)]


def form(text: str) -> DateForm:
    (found,) = find(text)
    return found.form


@pytest.mark.parametrize(
    "text",
    [
        "this 21st day of January, 2003",
        "the 21st day of January 2003",
        "21 day of January, 2003",
        "21st day of January in the year 2003",
    ],
)
def test_the_ordinal_day_of_forms_read_the_date_with_or_without_the_comma(text: str) -> None:
    assert [value for _, value in read(text)] == [date(2003, 1, 21)]
    assert form(text) is DateForm.DAY_OF_MONTH_YEAR


@pytest.mark.parametrize("text", ["the 1st of March, 2003", "1st of March 2003"])
def test_the_nth_of_month_form(text: str) -> None:
    assert [value for _, value in read(text)] == [date(2003, 3, 1)]


@pytest.mark.parametrize(
    "text", ["made the 20 March day of 1998", "made this 20th March day of 1998 between"]
)
def test_a_templates_day_blank_filled_with_the_day_and_the_month(text: str) -> None:
    # "made the ____ day of ________ 1998", its first blank filled with "20 March"
    assert [value for _, value in read(text)] == [date(1998, 3, 20)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("31 January, 1994", date(1994, 1, 31)),
        ("19 Jan. 1998", date(1998, 1, 19)),
        ("DATED 15TH DECEMBER 2001", date(2001, 12, 15)),
        ("Sept 5, 2003", date(2003, 9, 5)),
        ("Sept. 5, 2003", date(2003, 9, 5)),
        ("Nov. 02, 2019", date(2019, 11, 2)),
        ("NOV 02, 2019", date(2019, 11, 2)),
        ("July 11 , 2006", date(2006, 7, 11)),
        ("March 15 2024", date(2024, 3, 15)),
        ("December 31,2017", date(2017, 12, 31)),
    ],
)
def test_month_names_abbreviated_with_a_period_and_commas_as_contracts_space_them(
    text: str, value: date
) -> None:
    assert [v for _, v in read(text)] == [value]


@pytest.mark.parametrize(
    "text", ["15t h day of February 2016", "1 st day of May 2006", "1s t day of March, 2018"]
)
def test_an_ordinal_that_text_extraction_split_is_still_an_ordinal(text: str) -> None:
    (found,) = find(text)
    assert found.value is not None and found.value.year in (2016, 2006, 2018)


def test_every_spec_v1_form_is_read_too() -> None:
    assert [v for _, v in read("2024-03-15, 15 March 2024 and March 15, 2024")] == [
        date(2024, 3, 15)
    ] * 3


def test_slash_dates_are_kept_for_the_documents_convention() -> None:
    (found,) = find("signed 7/1/98")
    assert found.form is DateForm.NUMERIC_SLASH and found.value is None
    assert found.numeric == Numeric(7, 1, 1998, "7/1/98")
    assert found.numeric.reading(SlashOrder.MONTH_FIRST) == date(1998, 7, 1)
    assert found.numeric.reading(SlashOrder.DAY_FIRST) == date(1998, 1, 7)


@pytest.mark.parametrize(
    ("written", "proves"),
    [("13/07/05", SlashOrder.DAY_FIRST), ("7/13/05", SlashOrder.MONTH_FIRST), ("7/1/05", None)],
)
def test_a_slash_date_proves_an_order_only_when_one_reading_is_impossible(
    written: str, proves: SlashOrder | None
) -> None:
    (found,) = find(written)
    assert found.numeric is not None and found.numeric.proves() is proves


@pytest.mark.parametrize(("year", "full"), [(0, 2000), (68, 2068), (69, 1969), (98, 1998)])
def test_two_digit_years_follow_the_posix_pivot(year: int, full: int) -> None:
    assert two_digit_year(year) == full


def test_dotted_dates_are_day_first_and_year_first_ones_are_iso_like() -> None:
    assert read("31.12.2019 and 2019.02.25") == [
        ("31.12.2019", date(2019, 12, 31)),
        ("2019.02.25", date(2019, 2, 25)),
    ]


def test_dash_dates_are_read_only_right_after_a_date_label() -> None:
    assert [written for written, _ in read("Date: 3-5-98")] == ["3-5-98"]
    assert [written for written, _ in read("Dated:: 12-21-2017")] == ["12-21-2017"]
    assert read("Phone: 215-988-0880, case 18-10248, section 3-5-98") == []


def test_a_range_reads_its_year_less_start_with_the_ends_year() -> None:
    assert read("from March 1 to June 30, 2003") == [
        ("March 1", date(2003, 3, 1)),
        ("June 30, 2003", date(2003, 6, 30)),
    ]
    assert read("1 March to 30 June 2003") == [
        ("1 March", date(2003, 3, 1)),
        ("30 June 2003", date(2003, 6, 30)),
    ]
    assert find("March 1 - June 30, 2003")[0].form is DateForm.RANGE_START


def test_a_range_that_crosses_new_year_starts_the_year_before() -> None:
    assert read("December 1 through January 31, 2004")[0] == ("December 1", date(2003, 12, 1))


@pytest.mark.parametrize(
    "text",
    ["31 April 2024", "February 29, 2023", "2024-13-01", "June 30, September 30", "May 2019"],
)
def test_what_is_no_real_date_or_names_no_year_is_not_a_date(text: str) -> None:
    assert [f for f in find(text) if f.value is not None] == []


def test_a_date_is_a_whole_word() -> None:
    assert read("12024-01-01 115 March 2024 a2024-01-01") == []
    assert read("(2024-01-01).") == [("2024-01-01", date(2024, 1, 1))]


@pytest.mark.parametrize(
    ("text", "order"),
    [
        ("Dates are written (dd/mm/yyyy).", SlashOrder.DAY_FIRST),
        ("format MM/DD/YY", SlashOrder.MONTH_FIRST),
        ("no legend here", None),
    ],
)
def test_a_legend_states_the_slash_order(text: str, order: SlashOrder | None) -> None:
    assert legend_order(text) is order


def test_the_bounds_find_tries_the_pattern_within_hold_for_the_pattern() -> None:
    # DATE_WIDTH is the most characters a match spans; DATE_LEAD how far after its start
    # a date's first digit may stand (a month's name and period, then up to four spaces).
    widest = re._parser.parse(DATE_PATTERN.pattern, DATE_PATTERN.flags).getwidth()[1]
    assert widest == DATE_WIDTH
    assert [(f.start, f.end) for f in find("On September.    5, 2003 and Sept.  12 2004.")] == [
        (3, 24),
        (29, 43),
    ]
    assert len("September.    ") == DATE_LEAD
