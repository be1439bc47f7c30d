"""S3 refuses an object key over 1,024 bytes of UTF-8.

What moto does: it stores a key of any length.

What AWS does: "The object key name is a sequence of Unicode characters with UTF-8
encoding of up to 1,024 bytes long" ("Naming Amazon S3 objects":
https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-keys.html); a longer key is
refused with 400 ``KeyTooLongError`` ("Your key is too long").

The fix refuses such a key where PutObject, CopyObject (its target) and
CreateMultipartUpload reach moto's ``S3Backend.put_object`` and
``S3Backend.create_multipart_upload``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from richdoc_tools.local.patch_targets import original, replace

if TYPE_CHECKING:
    from moto.s3.models import S3Backend

P = ParamSpec("P")
CreatedT = TypeVar("CreatedT")

PUT = "moto.s3.models.S3Backend.put_object"
MULTIPART = "moto.s3.models.S3Backend.create_multipart_upload"
PATCHED = (PUT, MULTIPART)
MAX_KEY_BYTES = 1024


def _too_long() -> Exception:
    from moto.s3.exceptions import S3ClientError

    error = S3ClientError("KeyTooLongError", "Your key is too long")
    error.code = "KeyTooLongError"
    return error


def limited(
    create: Callable[Concatenate[S3Backend, P], CreatedT], key_position: int
) -> Callable[Concatenate[S3Backend, P], CreatedT]:
    @functools.wraps(create)
    def create_limited(backend: S3Backend, /, *args: P.args, **kwargs: P.kwargs) -> CreatedT:
        key = kwargs.get("key_name", args[key_position] if len(args) > key_position else "")
        if len(str(key).encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
            raise _too_long()
        return create(backend, *args, **kwargs)

    return create_limited


def install(exit_stack: contextlib.ExitStack) -> None:
    # Both take (bucket_name, key_name, ...).
    replace(exit_stack, PUT, limited(original(PUT), 1))
    replace(exit_stack, MULTIPART, limited(original(MULTIPART), 1))
