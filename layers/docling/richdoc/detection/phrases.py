"""The phrase that governs a date (``contracts-v2``): the last words before it.

The words right before a date are read backwards: first the particles that only join a
phrase to its date ("on", "as of", "the", "this", quotes, an opening parenthesis), then
the longest entry of ``PHRASES`` that ends there. Reading a few words backwards costs the
same whatever the lexicon's size, where a regex anchored at the date would try every
position of the text before it: detection stays within a small multiple of one date
pass (docs/detection.md, "Performance").
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import lru_cache

from richdoc.detection import trie


class Kind(StrEnum):
    LABEL_EFFECTIVE = "label_effective"  # Effective Date:  Commencing:
    LABEL_AGREEMENT = "label_agreement"  # Agreement Date:
    LABEL_TERM = "label_term"  # Expiration Date:  Termination Date:
    LABEL_DATE = "label_date"  # Date:  Dated:  Date Signed:
    ESIGN = "esign"  # an e-signature stamp's time: "at 11:40 am,"
    ACCEPTED = "accepted"  # AGREED AND ACCEPTED (as of)
    END = "end"  # ending on, until, through, to
    DEADLINE = "deadline"  # no later than, on or before, by, within, due
    EFFECTIVE_DATE_IS = "effective_date_is"  # "Effective Date" means / shall be / is
    EFFECTIVE = "effective"  # effective (as of), with effect from
    COMMENCE = (
        "commence"  # commence(s/ing) on, begin(s), start(s), into force, in effect, valid from
    )
    MADE = "made"  # made, entered into, executed, dated, signed, amended ...
    AS_OF = "as_of"  # as of, alone
    PLAIN = "plain"  # from, alone
    SIGNED_BY = "signed_by"  # signed by both parties on, executed by Acme as of


# Word sequences (lower case, ":" a token of its own) and the kind of phrase they end.
_TERM_LABELS = (
    "expiration", "expiry", "termination", "end", "renewal", "due", "delivery", "closing",
    "payment", "completion",
)  # fmt: skip
PHRASES: dict[tuple[str, ...], Kind] = {
    **{
        words: Kind.LABEL_EFFECTIVE
        for words in (
            ("effective", "date", ":"),
            ("effective", ":"),
            ("commencement", "date", ":"),
            ("commencement", ":"),
            ("commencing", ":"),
            ("start", "date", ":"),
        )
    },
    ("agreement", "date", ":"): Kind.LABEL_AGREEMENT,
    ("contract", "date", ":"): Kind.LABEL_AGREEMENT,
    **{(label, "date", ":"): Kind.LABEL_TERM for label in _TERM_LABELS},
    **{
        words: Kind.LABEL_DATE
        for words in (
            ("date", ":"),
            ("date",),
            ("dated", ":"),
            ("date", "signed", ":"),
            ("date", "signed"),
            ("signature", "date", ":"),
            ("signature", "date"),
            ("signed", ":"),
            ("executed", ":"),
        )
    },
    **{
        words: Kind.ACCEPTED
        for words in (
            ("agreed", "and", "accepted"),
            ("agreed", "to", "and", "accepted"),
            ("accepted", "and", "agreed"),
            ("accepted", "and", "agreed", "to"),
            ("acknowledged", "and", "agreed"),
            ("accepted",),
        )
    },
    **{
        (word,): Kind.END
        for word in (
            "end",
            "ends",
            "ended",
            "ending",
            "expire",
            "expires",
            "expired",
            "expiring",
            "expiration",
            "terminate",
            "terminates",
            "terminated",
            "terminating",
            "termination",
            "until",
            "through",
            "thru",
            "till",
            "to",
        )
    },
    ("up", "to"): Kind.END,
    ("and", "including"): Kind.END,
    **{
        words: Kind.DEADLINE
        for words in (
            ("no", "later", "than"),
            ("not", "later", "than"),
            ("or", "before"),
            ("or", "prior", "to"),
            ("prior", "to"),
            ("before",),
            ("after",),
            ("by",),
            ("within",),
            ("due",),
            ("payable",),
            ("paid",),
            ("since",),
            ("following",),
            ("between",),
            ("past",),
        )
    },
    **{
        words: Kind.EFFECTIVE_DATE_IS
        for words in (
            ("is",),
            ("shall", "be"),
            ("will", "be"),
            ("means",),
            ("mean",),
            ("shall", "mean"),
            ("the", "meaning"),
        )
    },
    ("effective",): Kind.EFFECTIVE,
    ("with", "effect"): Kind.EFFECTIVE,
    ("made", "effective"): Kind.EFFECTIVE,
    ("retroactive", "effect"): Kind.EFFECTIVE,
    ("retroactive", "to"): Kind.EFFECTIVE,
    ("retroactively", "to"): Kind.EFFECTIVE,
    **{
        (word,): Kind.COMMENCE
        for word in (
            "commence",
            "commences",
            "commenced",
            "commencing",
            "begin",
            "begins",
            "beginning",
            "start",
            "starts",
            "started",
            "starting",
            "valid",
            "operative",
        )
    },
    **{
        words: Kind.COMMENCE
        for words in (
            ("into", "force"),
            ("into", "effect"),
            ("take", "effect"),
            ("takes", "effect"),
            ("in", "force"),
            ("in", "effect"),
            ("in", "full", "force"),
            ("force", "and", "effect"),
        )
    },
    **{
        (word,): Kind.MADE
        for word in (
            "made",
            "executed",
            "concluded",
            "signed",
            "dated",
            "agreed",
            "amended",
            "restated",
            "supplemented",
            "issued",
            "entered",
            "delivered",
        )
    },
    ("entered", "into"): Kind.MADE,
}
# The words that join a phrase to its date and are skipped before the phrase is looked up.
PARTICLES = ("on", "as", "of", "at", "upon", "in", "with", "the", "this", "from")
# Copulas are entries only for "Effective Date" (checked here).
COPULA_REACH = 60  # characters back from "is"/"means" where "effective date" must stand
VALID_REACH = 50  # characters back from "from" where "valid" may stand ("valid for 5 years from")
WINDOW = 60  # characters before a date that its phrase is read in


def _reversed(words: tuple[str, ...]) -> list[str]:
    """``words`` as they read backwards from the date (a reversed text), as regex atoms."""
    atoms: list[str] = []
    for index, word in enumerate(reversed(words)):
        if index:
            colon = ":" in (word, words[len(words) - index])
            atoms.append(r"\s*" if colon else r"\s+")
        atoms.extend([":{1,2}"] if word == ":" else [re.escape(char) for char in word[::-1]])
    return atoms


# The text before a date, reversed, read from the date on: the particles, then the
# longest phrase.
_BACKWARDS = re.compile(
    r"(?ai:(?P<particles>(?>(?:[\s,\"“”'(]|(?:"
    + "|".join(word[::-1] for word in PARTICLES)
    + r")(?![a-z]))*))"
    r"(?:(?P<time>(?:\.?m\.?[ap]\.?|m[ap])?\s*[0-9]{2}:[0-9]{1,2}\s+ta)(?![a-z])|(?P<phrase>"
    + trie.pattern(_reversed(words) for words in PHRASES)
    + r")(?![a-z]))?)"
)
_EFFECTIVE_DATE_BEFORE = re.compile(
    r"(?ai:[\"“']?effective\s+date[\"”']?(?:\s+of\s+(?:this|the)\s+[\w\s-]{1,40}?)?\s*\Z)"
)
_VALID_FOR = re.compile(r"(?ai:\bvalid\s+for\s+[^.;]{1,40}?\s*\Z)")
SIGNED_BY_REACH = 70  # characters back from "on" where "signed by" may stand
_SIGNED_BY = re.compile(r"(?ai:\b(?:counter)?(?:signed|executed)\s+by\s+[^.;:]{1,50}?\s*\Z)")


#: The phrase that governs a date: its kind, the offset of its first word in the text
#: read, and its words as written (lower case). A plain tuple: one is made per date.
Phrase = tuple[Kind, int, str]


def read(text: str, low: int, high: int) -> tuple[str, Phrase | None]:
    """The phrase that ends ``text[low:high]`` (the text right before a date), read in at
    most its last ``WINDOW`` characters, backwards; and the text read, in lower case. No
    phrase when only particles or nothing known stands there."""
    low = max(low, high - WINDOW)
    window = text[low:high].lower()
    return window, _governing(window, low, text, high)


def _governing(window: str, low: int, text: str, high: int) -> Phrase | None:
    match = _BACKWARDS.match(window[::-1])
    assert match is not None  # every part of the pattern is optional
    particles, time, found = match.group("particles", "time", "phrase")
    start = high - match.end()
    if time is not None:
        return (Kind.ESIGN, start, time[::-1])
    if found is not None:
        kind, said = _kind_of(found)
        if kind is not Kind.EFFECTIVE_DATE_IS:
            return (kind, start, said)
        defined = _EFFECTIVE_DATE_BEFORE.search(text, max(0, start - COPULA_REACH), start)
        if defined is not None:  # the phrase is the definition: "Effective Date" means
            return (kind, defined.start(), said)
    if not particles or particles.isspace():
        return None
    skipped = particles[::-1].split()
    after = high - len(particles)
    if "from" in skipped:
        valid = _VALID_FOR.search(text, max(0, after - VALID_REACH), after)
        if valid is not None:
            return (Kind.COMMENCE, valid.start(), "valid")
    if "on" in skipped or ("as" in skipped and "of" in skipped):
        signed = _SIGNED_BY.search(text, max(0, after - SIGNED_BY_REACH), after)
        if signed is not None:
            return (Kind.SIGNED_BY, signed.start(), signed.group().lower())
    if "as" in skipped and "of" in skipped:
        return (Kind.AS_OF, after, "as of")
    if "from" in skipped:
        return (Kind.PLAIN, after, "from")
    return None


@lru_cache(maxsize=4096)
def _kind_of(found: str) -> tuple[Kind, str]:
    """The kind of a phrase as the backwards pattern found it (reversed), and its words.
    A pure function of a short string from a small vocabulary: remembered."""
    said = found[::-1]
    words = tuple(said.replace(":", " : ").split())
    words = tuple(word for i, word in enumerate(words) if word != ":" or words[i - 1 : i] != (":",))
    return PHRASES[words], said
