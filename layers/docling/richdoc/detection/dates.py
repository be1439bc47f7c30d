"""Dates as contracts write them (the ``contracts-v2`` rule set; docs/detection.md,
"contracts-v2: dates").

Every form of ``richdoc.temporal`` (ISO, ``D Month YYYY``, ``Month D, YYYY``) and more:

* ordinal "day of" forms: ``21st day of January, 2003``, ``the 1st day of March in the
  year 2003``, ``30 day of June 2016``; ``the 1st of March, 2003``;
* a template's day blank filled with the day and month: ``the 20 March day of 1998``;
* ``31 January, 1994``, ``19 Jan. 1998``, ``Sept. 5, 2003``, ``July 11 , 2006``,
  ``March 15 2024``; an ordinal suffix split by text extraction (``15t h``, ``1 st``);
* numeric dates: ``m/d/yy`` and ``m/d/yyyy`` (read by one convention per document, below),
  ``d.m.yyyy`` (always day first, as the dotted form is written), ``yyyy.mm.dd`` (an
  e-signature stamp's), and ``m-d-yy``/``m-d-yyyy`` only right after a ``Date:`` label
  (elsewhere dashes join telephone, case and section numbers);
* a range's year-less start: ``from March 1 to June 30, 2003`` reads ``March 1`` as
  2003-03-01 (the year before when its month comes after the end's).

Numeric slash dates are month first (the US convention) unless the document proves
otherwise: a slash date whose first number is over 12, or a ``dd/mm`` legend, makes the
document's slash dates day first; one whose second number is over 12, or an ``mm/dd``
legend, proves month first. Dates in stamps (a filing service's page footer) prove
nothing: another hand wrote them. A slash date is *ambiguous* when the convention was not
proven and its two readings are different real dates. Two-digit years follow the POSIX
pivot: 69 to 99 are 1969 to 1999, 00 to 68 are 2000 to 2068.

Like ``richdoc.temporal``: ASCII digits, ASCII-only case folding, whole words, every date
validated on the proleptic Gregorian calendar; one regex pass per block.
"""

from __future__ import annotations

import re
from datetime import date
from enum import StrEnum
from typing import NamedTuple

from richdoc.temporal import calendar_date


class DateForm(StrEnum):
    ISO = "iso"  # 2024-03-15
    DAY_MONTH_YEAR = "day month year"  # 15 March 2024, 31 January, 1994
    MONTH_DAY_YEAR = "month day, year"  # March 15, 2024, Sept. 5 2003
    DAY_OF_MONTH_YEAR = "day of month, year"  # 21st day of January, 2003; the 1st of March
    NUMERIC_SLASH = "numeric m/d/y"  # 7/1/98, 13/07/05: the document's convention
    NUMERIC_DOT = "numeric d.m.y"  # 31.12.2019, day first
    NUMERIC_YEAR_FIRST = "numeric y.m.d"  # 2019.02.25
    NUMERIC_DASH = "numeric m-d-y after Date:"  # Date: 3-5-98
    RANGE_START = "range start"  # March 1 in "March 1 to June 30, 2003"


class SlashOrder(StrEnum):
    """How a document writes its slash dates."""

    MONTH_FIRST = "month first"
    DAY_FIRST = "day first"


# Month names: full, three letters (with or without a period), and "Sept", as a trie on
# their first letters (each alternative fails at once on another first letter).
_MONTH = (
    r"(?ai:j(?:an(?:uary)?|u(?:ne?|ly?))|feb(?:ruary)?|ma(?:r(?:ch)?|y)|a(?:pr(?:il)?|ug(?:ust)?)"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
        start=1,
    )
}
# An ordinal suffix, also as text extraction splits it ("1 st", "15t h", "1s t").
_ORDINAL = r"(?ai:\s?(?:st|nd|rd|th)|s\st|n\sd|r\sd|t\sh)"
_DAY = rf"[0-9]{{1,2}}{_ORDINAL}?"
_YEAR = r"[0-9]{4}"
_S = r"\s{1,4}"  # where a form has a space
_COMMA = r"(?:\s{0,4},\s{0,4}|\s{1,4})"  # a comma, spaced as it may be, or a space
_RANGE_JOIN = r"\s{0,4}(?:-|–|—|(?ai:to|through|thru|until|till|and))\s{0,4}"

# The forms that begin with a digit, sharing their first number, then those that begin
# with a month. A range whose start has no year ("March 1 to June 30, 2003", "1 March to
# 30 June 2003") is the month form's (the day form's) optional middle.
_DIGIT_FORMS = (
    rf"(?P<iso_y>{_YEAR})(?:-(?P<iso_m>[0-9]{{2}})-(?P<iso_d>[0-9]{{2}})"
    rf"|\.(?P<ymd_m>[0-9]{{2}})\.(?P<ymd_d>[0-9]{{2}}))"
    rf"|(?P<num_a>[0-9]{{1,2}})(?:/(?P<sl_b>[0-9]{{1,2}})/(?P<sl_y>{_YEAR}|[0-9]{{2}})(?![/.][0-9])"
    rf"|\.(?P<dot_m>[0-9]{{1,2}})\.(?P<dot_y>{_YEAR})(?!\.[0-9]))"
    rf"|(?P<day>{_DAY}){_S}(?:(?ai:day){_S}(?ai:of){_S}(?P<dof_m>{_MONTH})"
    rf"(?:{_COMMA}(?ai:in{_S}the{_S}year){_S}|{_COMMA})(?P<dof_y>{_YEAR})"
    rf"|(?ai:of){_S}(?P<of_m>{_MONTH}){_COMMA}(?P<of_y>{_YEAR})"
    rf"|(?P<dmy_m>{_MONTH})(?:{_RANGE_JOIN}(?P<dmy_d2>{_DAY}){_S}(?P<dmy_m2>{_MONTH})"
    rf"|{_S}(?ai:day){_S}(?ai:of))?{_COMMA}(?P<dmy_y>{_YEAR}))"
)
_MONTH_FORMS = (
    rf"(?P<mdy_m>{_MONTH}){_S}(?P<mdy_d>{_DAY})"
    rf"(?:{_RANGE_JOIN}(?P<mdy_m2>{_MONTH}){_S}(?P<mdy_d2>{_DAY}))?{_COMMA}(?P<mdy_y>{_YEAR})"
)
#: One pass of this pattern finds every candidate date of a block. It begins with a
#: lookahead on the first character a date can start with (a digit or a month's first
#: letter): the regex engine then skips every other position without trying the pattern
#: there, about a third faster than starting with the word-boundary lookbehind.
DATE_PATTERN = re.compile(
    rf"(?=[0-9JFMASONDjfmasond])(?<!\w)(?:(?=[0-9]){_DIGIT_FORMS}|(?=[JFMASONDjfmasond]){_MONTH_FORMS})"
    r"(?!\w)"
)
# Every date holds a digit, and its first digit stands at most DATE_LEAD characters after
# its start (a month's name with its period, then the spaces before the day); a match reads
# at most DATE_WIDTH characters, and its closing lookaheads two more. So the pattern need
# only be tried from DATE_LEAD characters before each digit, on a stretch that ends
# DATE_WIDTH + 3 characters after it: the same matches as one pass over the whole block
# (a test holds both bounds to the pattern), without trying every word that begins with a
# month's letter.
DATE_LEAD = len("september.") + 4
DATE_WIDTH = 66
_DIGIT = re.compile(r"[0-9]")
# The dash form, read only right after a date label.
_DASH_PATTERN = re.compile(
    r"(?ai:\b(?:date|dated|date\s+signed)\s{0,4}:{1,2}\s{0,4})"
    r"(?P<da_a>[0-9]{1,2})-(?P<da_b>[0-9]{1,2})-(?P<da_y>[0-9]{4}|[0-9]{2})(?![\w-])"
)
# Legends that state a document's slash order: "(mm/dd/yyyy)", "DD/MM/YY".
_LEGEND = re.compile(r"(?ai:\b(?P<first>dd|mm)/(?P<second>dd|mm)/(?:yyyy|yy)\b)")


class Numeric(NamedTuple):
    """A slash or dash date's numbers as written: ``a/b/year``."""

    a: int
    b: int
    year: int
    text: str  # as written, e.g. "7/1/98"

    def reading(self, order: SlashOrder) -> date | None:
        month, day = (self.a, self.b) if order is SlashOrder.MONTH_FIRST else (self.b, self.a)
        return calendar_date(self.year, month, day)

    def proves(self) -> SlashOrder | None:
        """The order this date can only be read in, if one reading is impossible."""
        if self.a > 12 >= self.b:
            return SlashOrder.DAY_FIRST
        if self.b > 12 >= self.a:
            return SlashOrder.MONTH_FIRST
        return None


class Found(NamedTuple):
    """A date as found in a block, before the document's slash order is known: ``value``
    is set for every form but the slash and dash ones, whose ``numeric`` is read later."""

    start: int  # character offsets in the block
    end: int
    form: DateForm
    value: date | None
    numeric: Numeric | None = None


def two_digit_year(year: int) -> int:
    """The POSIX pivot: 69-99 are 1969-1999, 00-68 are 2000-2068."""
    return year + (1900 if year >= 69 else 2000)


def _year(token: str) -> int:
    year = int(token)
    return two_digit_year(year) if len(token) == 2 else year


def _valid(year: int, month: int, day: int) -> date | None:
    """``calendar_date``, with the common case (a day up to the 28th) decided at once."""
    if 1 <= day <= 28 and 1 <= month <= 12 and year >= 1:
        return date(year, month, day)
    return calendar_date(year, month, day)


def _month(token: str) -> int:
    return _MONTHS[token[:3].lower()]


def _day(token: str) -> int:
    """A day's number: its one or two digits, before any ordinal suffix."""
    return int(token[:2]) if token[1:2].isdigit() else int(token[0])


def _numeric(a: str, b: str, year: str, text: str) -> Numeric:
    return Numeric(int(a), int(b), _year(year), text)


def _range_start(month: int, day: int, end: date | None) -> date | None:
    """The year-less start of a range ending at ``end``: the end's year, or the year
    before when the start's month comes after the end's."""
    if end is None:
        return None
    year = end.year if (month, day) <= (end.month, end.day) else end.year - 1
    return calendar_date(year, month, day)


def _found(match: re.Match[str]) -> Found | tuple[Found, Found]:
    """The date (or a range's two dates) a match names; the last group the match closed
    says which form it is."""
    last = match.lastgroup
    start, end = match.span()
    if last == "mdy_y" or last == "dmy_y":
        if last == "mdy_y":
            names = ("mdy_d", "mdy_m", "mdy_d2", "mdy_m2", "mdy_y")
            form = DateForm.MONTH_DAY_YEAR
        else:
            names = ("day", "dmy_m", "dmy_d2", "dmy_m2", "dmy_y")
            form = DateForm.DAY_MONTH_YEAR
        day, month, _, month2, year = match.group(*names)
        if month2 is None:
            return Found(start, end, form, _valid(int(year), _month(month), _day(day)))
        return _range(match, *names, form)
    if last == "iso_d" or last == "ymd_d":
        year, month, day = match.group(
            "iso_y", *(("iso_m", "iso_d") if last == "iso_d" else ("ymd_m", "ymd_d"))
        )
        form = DateForm.ISO if last == "iso_d" else DateForm.NUMERIC_YEAR_FIRST
        return Found(start, end, form, calendar_date(int(year), int(month), int(day)))
    if last == "sl_y":
        a, b, year = match.group("num_a", "sl_b", "sl_y")
        return Found(start, end, DateForm.NUMERIC_SLASH, None, _numeric(a, b, year, match.group()))
    if last == "dot_y":
        day, month, year = match.group("num_a", "dot_m", "dot_y")
        return Found(
            start, end, DateForm.NUMERIC_DOT, calendar_date(int(year), int(month), int(day))
        )
    year_group = "dof_y" if last == "dof_y" else "of_y"
    day, month, year = match.group("day", "dof_m" if last == "dof_y" else "of_m", year_group)
    value = calendar_date(int(year), _month(month), _day(day))
    return Found(start, end, DateForm.DAY_OF_MONTH_YEAR, value)


def _range(
    match: re.Match[str],
    day: str,
    month: str,
    day2: str,
    month2: str,
    year: str,
    form: DateForm,
) -> tuple[Found, Found]:
    """A range's two ends: its start (the end's year) and its end."""
    last = calendar_date(int(match[year]), _month(match[month2]), _day(match[day2]))
    first = _range_start(_month(match[month]), _day(match[day]), last)
    first_end = max(match.end(day), match.end(month))
    return (
        Found(match.start(), first_end, DateForm.RANGE_START, first),
        Found(min(match.start(day2), match.start(month2)), match.end(), form, last),
    )


def _matches(text: str) -> list[re.Match[str]]:
    """``DATE_PATTERN.finditer(text)``, tried only near the digits (``DATE_LEAD``)."""
    search, digit, size = DATE_PATTERN.search, _DIGIT.search, len(text)
    matches: list[re.Match[str]] = []
    pos = 0
    while (first := digit(text, pos)) is not None:
        at = first.start()
        match = search(text, max(pos, at - DATE_LEAD), min(size, at + DATE_WIDTH + 3))
        if match is None or match.start() > at:  # no date holds this digit first
            pos = at + 1
        else:
            matches.append(match)
            pos = match.end()
    return matches


def find(text: str) -> list[Found]:
    """Every date of a block in text order: one pass of ``DATE_PATTERN`` (near the digits),
    and a search for dash dates where a date label is (rare: skipped where the block has no
    colon)."""
    found: list[Found] = []
    for match in _matches(text):
        one = _found(match)
        if isinstance(one, Found):
            if one.value is not None or one.numeric is not None:
                found.append(one)
        else:
            found.extend(f for f in one if f.value is not None)
    if ":" in text and "-" in text:
        dashes = [
            Found(
                m.start("da_a"),
                m.end(),
                DateForm.NUMERIC_DASH,
                None,
                _numeric(m["da_a"], m["da_b"], m["da_y"], text[m.start("da_a") : m.end()]),
            )
            for m in _DASH_PATTERN.finditer(text)
        ]
        if dashes:
            taken = {(f.start, f.end) for f in found}
            found += (d for d in dashes if (d.start, d.end) not in taken)
            found.sort(key=lambda f: f.start)
    return found


def legend_order(text: str) -> SlashOrder | None:
    """The slash order a legend in ``text`` states ("dd/mm/yyyy"), if any."""
    for match in _LEGEND.finditer(text):
        first, second = match["first"].lower(), match["second"].lower()
        if first != second:
            return SlashOrder.DAY_FIRST if first == "dd" else SlashOrder.MONTH_FIRST
    return None
