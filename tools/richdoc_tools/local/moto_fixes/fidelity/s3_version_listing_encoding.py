"""ListObjectVersions answers ``EncodingType=url`` with its keys URL-encoded.

What moto does: it honours ``EncodingType`` for ListObjects but not for
ListObjectVersions: it writes a key XML 1.0 cannot carry (one with a control character
such as an escape) into the XML raw and answers 500, so the notifier could never list the
versions of a document named so (it retried forever and the stream stopped).

What AWS does: botocore asks every ListObjectVersions for ``EncodingType=url`` and
decodes what comes back; S3 then URL-encodes the keys, prefixes, delimiter and markers
of its answer (ListObjectVersions, ``EncodingType``:
https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html).

The fix encodes what S3 encodes (``Key``, ``Prefix``, ``Delimiter``, ``KeyMarker``,
``NextKeyMarker``, each common prefix), as moto's own ListObjects does
(``FakeKey.safe_name``), and says ``EncodingType: url``.
"""

from __future__ import annotations

import contextlib
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from unittest import mock

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.core.common_types import TYPE_RESPONSE
    from moto.core.responses import ActionResult
    from moto.s3.responses import S3Response

TARGET = "moto.s3.responses.S3Response.list_object_versions"
PATCHED = (TARGET,)

ENCODED = ("Prefix", "Delimiter", "KeyMarker", "NextKeyMarker")


def url_encoded(result: dict[str, Any]) -> dict[str, Any]:
    """The listing's result with what S3 encodes for ``EncodingType=url`` encoded."""
    quote = urllib.parse.quote
    encoded = dict(result)
    for name in ENCODED:
        if encoded.get(name):
            encoded[name] = quote(encoded[name])
    for group in ("Versions", "DeleteMarkers"):
        encoded[group] = [{**entry, "Key": quote(entry["Key"])} for entry in result[group]]
    if "CommonPrefixes" in result:
        encoded["CommonPrefixes"] = [
            {"Prefix": quote(p["Prefix"])} for p in result["CommonPrefixes"]
        ]
    encoded["EncodingType"] = "url"
    return encoded


def honouring_encoding(
    listing: Callable[[S3Response], TYPE_RESPONSE],
) -> Callable[[S3Response], TYPE_RESPONSE]:
    def list_object_versions(response: S3Response) -> TYPE_RESPONSE:
        if response.querystring.get("encoding-type", [None])[0] != "url":
            return listing(response)
        from moto.core.responses import ActionResult

        serialized = response.serialized

        def serialized_encoded(action: ActionResult) -> TYPE_RESPONSE:
            listed = action.result
            if not isinstance(listed, dict):
                return serialized(action)
            return serialized(ActionResult(url_encoded(listed)))

        with mock.patch.object(response, "serialized", serialized_encoded):  # this answer only
            return listing(response)

    return list_object_versions


def install(exit_stack: contextlib.ExitStack) -> None:
    replace(exit_stack, TARGET, honouring_encoding(original(TARGET)))
