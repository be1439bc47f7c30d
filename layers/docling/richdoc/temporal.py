"""Absolute date recognition and calendar helpers (docs/detection.md, "Dates").

Recognised forms, case-insensitive, validated as real calendar dates:

* ISO ``YYYY-MM-DD`` (two-digit month and day);
* ``D Month YYYY`` (``15 March 2024``, ``1st Mar 2024``);
* ``Month D, YYYY`` (``March 15, 2024``, ``Mar 1st, 2024``).

Month names are English, full or three-letter; the day takes an optional ordinal suffix
(``st``/``nd``/``rd``/``th``). Numeric slash/dash forms such as ``1/2/2026`` are not
recognised: their reading is ambiguous and belongs to the tabular worker.

A date is a whole word: it must not touch a word character (letter, digit, underscore) on
either side, so ``12024-01-01`` and ``2024-01-015`` are not dates. Where a form has a space,
the text may have 1 to :data:`MAX_SPACE_RUN` whitespace characters (the same rule as the
detection lexicons, whose bounded length keeps every lookback window bounded). Standard
library only, no locale, no clock: the same text always gives the same dates.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import MAXYEAR, MINYEAR, date
from enum import StrEnum

MICROS_PER_DAY = 86_400_000_000
MAX_SPACE_RUN = 4
#: Where a form or a lexicon entry has a space: 1 to MAX_SPACE_RUN Unicode whitespace
#: characters (explicitly Unicode, as it also sits inside ASCII-mode groups).
SPACE = rf"(?u:\s{{1,{MAX_SPACE_RUN}}})"
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()

_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MONTH_BY_ABBREVIATION = {name[:3]: number for number, name in enumerate(_MONTHS, start=1)}


def literal_pattern(phrase: str) -> str:
    """Regex source for an English phrase, case-insensitive for ASCII letters only; a
    space matches :data:`SPACE`.

    The group is scoped to ASCII mode because plain ``re.IGNORECASE`` folds Unicode
    look-alikes too (the Kelvin sign matches ``k``, the long s ``s``, dotted capital I
    ``i``); outside the group ``\\w`` stays Unicode, so word boundaries still see é or ß.
    """
    return "(?ai:" + SPACE.join(re.escape(word) for word in phrase.split(" ")) + ")"


# "jan(?:uary)?": each full name is the optional tail of its three-letter abbreviation.
_MONTH = (
    "(?ai:"
    + "|".join(name[:3] + (f"(?:{name[3:]})?" if len(name) > 3 else "") for name in _MONTHS)
    + ")"
)
_DAY = r"[0-9]{1,2}(?ai:st|nd|rd|th)?"
_YEAR = r"[0-9]{4}"

# ASCII digits only: int() would accept other scripts' digits, which are not in the forms.
_DATE_FORMS = (
    rf"(?P<iso_y>{_YEAR})-(?P<iso_m>[0-9]{{2}})-(?P<iso_d>[0-9]{{2}})"
    rf"|(?P<dmy_d>{_DAY}){SPACE}(?P<dmy_m>{_MONTH}){SPACE}(?P<dmy_y>{_YEAR})"
    rf"|(?P<mdy_m>{_MONTH}){SPACE}(?P<mdy_d>{_DAY}),\s{{0,{MAX_SPACE_RUN}}}(?P<mdy_y>{_YEAR})"
)
#: One pass of this pattern finds every candidate date; matches still need calendar
#: validation (see :func:`find_dates`).
DATE_PATTERN = re.compile(rf"(?<!\w)(?:{_DATE_FORMS})(?!\w)")
_DATE_GROUPS = ("iso_y", "iso_m", "iso_d", "dmy_y", "dmy_m", "dmy_d", "mdy_y", "mdy_m", "mdy_d")


@dataclass(frozen=True, slots=True)
class DateMatch:
    """A recognised date: its character offsets in the searched text and its value."""

    start: int
    end: int
    value: date

    @property
    def epoch_us(self) -> int:
        return epoch_micros(self.value)


def epoch_micros(day: date) -> int:
    """Microseconds since the Unix epoch at UTC midnight of ``day`` (negative before 1970)."""
    return (day.toordinal() - _EPOCH_ORDINAL) * MICROS_PER_DAY


def calendar_date(year: int, month: int, day: int) -> date | None:
    """The date if it exists on the proleptic Gregorian calendar (years 1-9999), else None."""
    if not (MINYEAR <= year <= MAXYEAR and 1 <= month <= 12):
        return None
    leap_day = month == 2 and day == 29 and calendar.isleap(year)
    if not (1 <= day <= _DAYS_IN_MONTH[month] or leap_day):
        return None
    return date(year, month, day)


def _day_number(token: str) -> int:
    # The ordinal suffix is decoration: "21th" is read as 21 (a typo, not an ambiguity).
    return int(token.rstrip("stndrhSTNDRH"))


def _value_of(match: re.Match[str]) -> date | None:
    """The calendar date a match names, or None if it does not exist."""
    iso_y, iso_m, iso_d, dmy_y, dmy_m, dmy_d, mdy_y, mdy_m, mdy_d = match.group(*_DATE_GROUPS)
    if iso_y is not None:
        return calendar_date(int(iso_y), int(iso_m), int(iso_d))
    year, month, day = (dmy_y, dmy_m, dmy_d) if dmy_y is not None else (mdy_y, mdy_m, mdy_d)
    return calendar_date(int(year), _MONTH_BY_ABBREVIATION[month[:3].lower()], _day_number(day))


def find_dates(text: str) -> Iterator[DateMatch]:
    """Every valid absolute date in ``text``, left to right, in one regex pass.

    Matches that are not real calendar dates (31 April, 29 February 2023, month 13) are
    skipped, not reported.
    """
    for match in DATE_PATTERN.finditer(text):
        value = _value_of(match)
        if value is not None:
            yield DateMatch(match.start(), match.end(), value)


class CalendarUnit(StrEnum):
    MONTH = "month"
    QUARTER = "quarter"
    YEAR = "year"


def start_of_next_month(day: date) -> date | None:
    """First day of the calendar month after ``day``'s; None past year 9999."""
    if day.month == 12:
        return calendar_date(day.year + 1, 1, 1)
    return date(day.year, day.month + 1, 1)


def start_of_next_quarter(day: date) -> date | None:
    """First day of the calendar quarter (Jan/Apr/Jul/Oct) after ``day``'s; None past 9999.

    Strictly after: the first day of a quarter maps to the start of the following one.
    """
    month = 3 * ((day.month - 1) // 3) + 4
    if month > 12:
        return calendar_date(day.year + 1, month - 12, 1)
    return date(day.year, month, 1)


def start_of_next_year(day: date) -> date | None:
    """1 January of the year after ``day``'s; None past year 9999."""
    return calendar_date(day.year + 1, 1, 1)


def start_of_next(unit: CalendarUnit, day: date) -> date | None:
    """Start of the next calendar ``unit`` strictly after ``day`` (UTC calendar)."""
    if unit is CalendarUnit.MONTH:
        return start_of_next_month(day)
    if unit is CalendarUnit.QUARTER:
        return start_of_next_quarter(day)
    return start_of_next_year(day)
