"""richdoc.temporal: the absolute date forms of docs/detection.md and the calendar helpers."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from richdoc.temporal import (
    DATE_PATTERN,
    CalendarUnit,
    DateMatch,
    epoch_micros,
    find_dates,
    start_of_next,
    start_of_next_month,
    start_of_next_quarter,
    start_of_next_year,
)

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def dates_in(text: str) -> list[date]:
    return [match.value for match in find_dates(text)]


# --- the three forms ---------------------------------------------------------------------


def test_iso_date_is_recognised_with_its_offsets():
    assert list(find_dates("Signed 2024-03-15.")) == [DateMatch(7, 17, date(2024, 3, 15))]


@pytest.mark.parametrize("number", range(1, 13))
def test_day_month_year_with_full_and_three_letter_month_names(number):
    name = MONTHS[number - 1]
    assert dates_in(f"on 5 {name} 2024") == [date(2024, number, 5)]
    assert dates_in(f"on 5 {name[:3]} 2024") == [date(2024, number, 5)]


@pytest.mark.parametrize("number", range(1, 13))
def test_month_day_comma_year_with_full_and_three_letter_month_names(number):
    name = MONTHS[number - 1]
    assert dates_in(f"on {name} 5, 2024") == [date(2024, number, 5)]
    assert dates_in(f"on {name[:3]} 5, 2024") == [date(2024, number, 5)]


def test_textual_forms_allow_a_leading_zero_and_any_whitespace_run_inside_the_block():
    assert dates_in("05 March 2024") == [date(2024, 3, 5)]
    assert dates_in("15\u00a0March\n2024") == [date(2024, 3, 15)]
    assert dates_in("March  15,2024") == [date(2024, 3, 15)]


def test_date_parts_are_separated_by_at_most_four_whitespace_characters():
    four = "15    March    2024, April 1,    2024"
    assert dates_in(four) == [date(2024, 3, 15), date(2024, 4, 1)]
    assert dates_in("15     March 2024, April 1,     2024") == []


def test_month_day_year_needs_its_comma_and_day_month_year_takes_none():
    assert dates_in("March 15 2024") == []
    assert dates_in("15 March, 2024") == []


@pytest.mark.parametrize(
    "ordinal", ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"]
)
def test_ordinal_suffixes_are_optional(ordinal):
    day = int(ordinal[:-2])
    assert dates_in(f"{ordinal} January 2024") == [date(2024, 1, day)]
    assert dates_in(f"January {ordinal}, 2024") == [date(2024, 1, day)]
    assert dates_in(f"{day} January 2024") == [date(2024, 1, day)]


def test_a_mismatched_ordinal_suffix_is_read_as_a_typo_not_rejected():
    assert dates_in("21th March 2024 and March 2st, 2024") == [date(2024, 3, 21), date(2024, 3, 2)]


def test_month_names_and_suffixes_are_case_insensitive():
    assert dates_in("15TH MARCH 2024, march 16th, 2024, 17 mAr 2024, DEC 1ST, 2024") == [
        date(2024, 3, 15),
        date(2024, 3, 16),
        date(2024, 3, 17),
        date(2024, 12, 1),
    ]


def test_unicode_case_folding_look_alikes_are_not_month_letters():
    # re.IGNORECASE would fold the long s to "s" and the dotted capital I to "i".
    assert dates_in("1 Augu\u017ft 2024, 1 Apr\u0130l 2024") == []


def test_other_spellings_of_textual_dates_are_not_recognised():
    assert dates_in("15th of March 2024, Sept 1, 2024, 1 Mar. 2024, Marching 15, 2024") == []


# --- validation --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "31 April 2024",
        "April 31, 2024",
        "2024-04-31",
        "29 February 2023",
        "2023-02-29",
        "29 February 1900",
        "2024-13-01",
        "2024-00-10",
        "2024-01-00",
        "0 March 2024",
        "32 March 2024",
        "0000-01-01",
    ],
)
def test_invalid_calendar_dates_are_not_dates(text):
    assert dates_in(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("29 February 2024", date(2024, 2, 29)),
        ("2024-02-29", date(2024, 2, 29)),
        ("Feb 29, 2000", date(2000, 2, 29)),
        ("0001-01-01", date(1, 1, 1)),
        ("9999-12-31", date(9999, 12, 31)),
    ],
)
def test_leap_days_and_the_calendar_limits_are_valid(text, expected):
    assert dates_in(text) == [expected]


def test_an_invalid_date_does_not_hide_the_dates_around_it():
    assert dates_in("2024-04-31 then 2024-05-01") == [date(2024, 5, 1)]


# --- what is not a date ------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1/2/2026", "01/02/2026", "01-02-2026", "1-2-2026", "2026/01/02"])
def test_numeric_slash_and_dash_forms_are_not_recognised(text):
    assert dates_in(f"due {text} at noon") == []


@pytest.mark.parametrize(
    "text",
    [
        "12024-01-01",
        "2024-01-015",
        "a2024-01-01",
        "2024-01-01b",
        "_2024-01-01",
        "2024-01-01T10:00:00Z",
        "115 March 2024",
        "15 March 20245",
        "15 March 2024x",
        "xMarch 15, 2024",
    ],
)
def test_a_date_glued_to_a_word_character_is_not_a_date(text):
    assert dates_in(text) == []


@pytest.mark.parametrize("text", ["(2024-01-01)", "2024-01-01.", "«1 Jan 2024»", "-2024-01-01"])
def test_punctuation_is_a_boundary(text):
    assert dates_in(text) == [date(2024, 1, 1)]


def test_only_ascii_digits_are_date_digits():
    arabic_indic = "\u0662\u0660\u0662\u0664-\u0660\u0661-\u0660\u0661"  # 2024-01-01
    assert dates_in(arabic_indic) == []


def test_dates_are_reported_left_to_right():
    text = "2024-05-01, 1 Jan 2023 and Feb 2, 2022"
    assert [(m.start, m.end) for m in find_dates(text)] == [(0, 10), (12, 22), (27, 38)]
    assert dates_in(text) == [date(2024, 5, 1), date(2023, 1, 1), date(2022, 2, 2)]


# --- epoch microseconds ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "micros"),
    [
        (date(1970, 1, 1), 0),
        (date(1970, 1, 2), 86_400_000_000),
        (date(1969, 12, 31), -86_400_000_000),
        (date(2024, 3, 1), 1_709_251_200_000_000),
        (date(2024, 2, 29), 1_709_164_800_000_000),
    ],
)
def test_epoch_micros_counts_from_utc_midnight(day, micros):
    assert epoch_micros(day) == micros


def test_a_match_exposes_its_epoch_micros():
    (match,) = find_dates("2024-03-01")
    assert match.epoch_us == 1_709_251_200_000_000


# --- calendar helpers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (date(2024, 1, 31), date(2024, 2, 1)),
        (date(2024, 2, 1), date(2024, 3, 1)),
        (date(2024, 2, 29), date(2024, 3, 1)),
        (date(2024, 12, 1), date(2025, 1, 1)),
        (date(2024, 12, 31), date(2025, 1, 1)),
        (date(9999, 11, 30), date(9999, 12, 1)),
    ],
)
def test_start_of_next_month(day, expected):
    assert start_of_next_month(day) == expected


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (date(2024, 1, 1), date(2024, 4, 1)),
        (date(2024, 2, 15), date(2024, 4, 1)),
        (date(2024, 3, 15), date(2024, 4, 1)),
        (date(2024, 3, 31), date(2024, 4, 1)),
        (date(2024, 4, 1), date(2024, 7, 1)),
        (date(2024, 6, 30), date(2024, 7, 1)),
        (date(2024, 7, 1), date(2024, 10, 1)),
        (date(2024, 9, 30), date(2024, 10, 1)),
        (date(2024, 10, 1), date(2025, 1, 1)),
        (date(2024, 12, 31), date(2025, 1, 1)),
    ],
)
def test_start_of_next_calendar_quarter_is_strictly_after(day, expected):
    assert start_of_next_quarter(day) == expected


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (date(2024, 1, 1), date(2025, 1, 1)),
        (date(2024, 6, 15), date(2025, 1, 1)),
        (date(2024, 12, 31), date(2025, 1, 1)),
    ],
)
def test_start_of_next_year(day, expected):
    assert start_of_next_year(day) == expected


def test_there_is_no_next_unit_after_the_last_representable_one():
    assert start_of_next_year(date(9999, 1, 1)) is None
    assert start_of_next_quarter(date(9999, 10, 1)) is None
    assert start_of_next_month(date(9999, 12, 31)) is None


def _unit_key(unit: CalendarUnit, day: date) -> tuple[int, int]:
    if unit is CalendarUnit.MONTH:
        return (day.year, day.month)
    if unit is CalendarUnit.QUARTER:
        return (day.year, (day.month - 1) // 3)
    return (day.year, 0)


@given(st.dates(max_value=date(9998, 12, 31)), st.sampled_from(list(CalendarUnit)))
def test_the_next_unit_starts_on_the_first_day_after_the_current_unit(day, unit):
    nxt = start_of_next(unit, day)
    assert nxt is not None and nxt > day
    assert (
        nxt.day == 1
        and nxt.month
        in {
            CalendarUnit.MONTH: range(1, 13),
            CalendarUnit.QUARTER: (1, 4, 7, 10),
            CalendarUnit.YEAR: (1,),
        }[unit]
    )
    # The day before it still lies in the anchor's unit: no unit start is skipped.
    assert _unit_key(unit, nxt - timedelta(days=1)) == _unit_key(unit, day)


FORMATS = [
    lambda d: d.isoformat(),
    lambda d: f"{d.day} {MONTHS[d.month - 1]} {d.year:04d}",
    lambda d: f"{d.day} {MONTHS[d.month - 1][:3]} {d.year:04d}",
    lambda d: f"{MONTHS[d.month - 1]} {d.day}, {d.year:04d}",
    lambda d: f"{MONTHS[d.month - 1].upper()[:3]} {d.day:02d}, {d.year:04d}",
]


@given(
    st.dates(),
    st.sampled_from(FORMATS),
    st.text(alphabet=st.characters(categories=["Zs", "Po", "Ps", "Pe"]), max_size=3),
    st.text(alphabet=st.characters(categories=["Zs", "Po", "Ps", "Pe"]), max_size=3),
)
def test_every_rendered_date_is_found_again_exactly(day, render, before, after):
    text = f"see {before}{render(day)}{after}"
    assert dates_in(text) == [day]
    (match,) = DATE_PATTERN.finditer(text)
    assert match.group() == render(day)
