"""User text in AWS string fields: only the characters and sizes each field accepts.

Failure reasons carry object keys, and S3 keys may hold any UTF-8, control characters
included. Where such text goes into an AWS request it must fit the field, or the request
is refused, and refused again on every retry:

* SQS message attribute values (String and Number) follow the message body's rules:
  only ``#x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF`` (the XML 1.0
  ``Char`` production; SendMessage and MessageAttributeValue in the SQS API reference),
  and the body and every attribute's name, type and value count towards the message's
  size, in UTF-8 bytes. ``sqs_string`` makes any text such a value.
* Step Functions ``StopExecution`` takes an ``error`` of at most 256 and a ``cause`` of
  at most 32,768 characters; ``fit_chars``.
* What needs nothing here: execution names are job ids (hex digits) and a run number;
  an execution's input and a dead-letter message's body are JSON that ``json.dumps``
  writes in ASCII (or the ingest message exactly as SQS delivered it); EMF dimensions
  are stage, tier and failure kind, never user text; DynamoDB keys are ids and digests,
  and its reasons are cut at ``MAX_REASON_CHARS``.

A refused character is spelled out as an escape (``\\x01``, ``\\ud800``, ``\\ufffe``),
as the terminal tables spell out control characters, so the value still says what the
key held; every other character is kept as it is.
"""

from __future__ import annotations

import re

# Characters outside XML 1.0's Char production: C0 controls but tab, LF and CR; the
# surrogates (a lone one cannot be encoded at all); U+FFFE and U+FFFF.
_REFUSED = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# Appended where a value was cut, so a reader knows there was more.
CUT_MARK = "..."


def _spelled(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_chars(text: str) -> str:
    """``text`` with every character SQS (and XML) refuses spelled out as an escape."""
    return _REFUSED.sub(_spelled, text)


def fit_utf8(text: str, max_bytes: int) -> str:
    """``text`` in at most ``max_bytes`` bytes of UTF-8, cut at a character boundary and
    marked (``CUT_MARK``) when it was longer. ``text`` must be encodable (``xml_chars``)."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    room = max(0, max_bytes - len(CUT_MARK))
    return encoded[:room].decode("utf-8", errors="ignore") + CUT_MARK[: max_bytes - room]


def fit_chars(text: str, max_chars: int) -> str:
    """``text`` in at most ``max_chars`` characters, encodable, marked when cut (a field
    whose limit counts characters, such as a Step Functions cause)."""
    safe = xml_chars(text)
    if len(safe) <= max_chars:
        return safe
    room = max(0, max_chars - len(CUT_MARK))
    return safe[:room] + CUT_MARK[: max_chars - room]


def sqs_string(text: str, max_bytes: int) -> str:
    """``text`` as an SQS String attribute value of at most ``max_bytes`` bytes: only
    the characters SQS accepts, escapes for the others. Non-empty text stays non-empty
    (SQS refuses an empty value): a caller leaves out an attribute it has no text for."""
    return fit_utf8(xml_chars(text), max_bytes)
