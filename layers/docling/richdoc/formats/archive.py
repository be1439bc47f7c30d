"""The ZIP container of an OOXML package: its size from the end records, bombs, part
names that stand for two entries, encrypted entries, and zipfile's errors on a damaged
archive as ``CorruptInput``."""

from __future__ import annotations

import contextlib
import errno
import lzma
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from richdoc.formats.extensions import DocFormat
from richdoc.formats.sheets import MAX_SHEET_CELLS
from richdoc.taxonomy import CorruptInput, ResourceLimit, UnsupportedFeature

MIB = 1 << 20

_EOCD = struct.Struct("<4s4H2LH")
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")


@dataclass(frozen=True)
class ArchiveLimits:
    """Thresholds that refuse a crafted OOXML archive before docling unpacks it.

    A real document never comes near them: a 2,000-slide deck has about 8,000 parts,
    and XML deflates 5 to 30 fold (about 200 fold for extremely repetitive XML),
    while deflate bombs expand about 1,000 fold.
    """

    max_unpacked_bytes: int  # declared uncompressed total; derived from the memory ceiling
    max_sheet_cells: int = MAX_SHEET_CELLS  # XLSX: cells of the used ranges, all sheets
    max_entries: int = 10_000
    max_ratio: float = 250.0
    ratio_floor_bytes: int = MIB  # small parts may compress arbitrarily well
    max_central_directory_bytes: int = 16 * MIB

    @classmethod
    def for_ceiling(cls, mem_ceiling_mb: int) -> ArchiveLimits:
        # XML DOMs take several times their text size in memory: an archive that unpacks
        # to more than half the ceiling cannot be parsed within it.
        return cls(max_unpacked_bytes=mem_ceiling_mb * MIB // 2)


def central_directory_size(f: BinaryIO) -> tuple[int, int]:
    """Entry count and central-directory size from the end records, before zipfile
    reads (and allocates for) the whole directory."""
    size = f.seek(0, 2)
    tail_len = min(size, _EOCD.size + 0xFFFF)  # the record plus a maximal comment
    f.seek(size - tail_len)
    tail = f.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _EOCD.size > len(tail):
        raise CorruptInput("the archive is truncated: no end-of-central-directory record")
    _, _, _, _, entries, cd_bytes, _, _ = _EOCD.unpack_from(tail, at)
    if entries != 0xFFFF and cd_bytes != 0xFFFFFFFF:
        return entries, cd_bytes
    locator_at = at - _ZIP64_LOCATOR.size
    if locator_at < 0 or tail[locator_at : locator_at + 4] != b"PK\x06\x07":
        raise CorruptInput("the archive is damaged: ZIP64 locator missing")
    _, _, record_offset, _ = _ZIP64_LOCATOR.unpack_from(tail, locator_at)
    f.seek(record_offset)
    record = f.read(_ZIP64_EOCD.size)
    if len(record) < _ZIP64_EOCD.size or record[:4] != b"PK\x06\x06":
        raise CorruptInput("the archive is damaged: ZIP64 end record missing")
    fields = _ZIP64_EOCD.unpack(record)
    return fields[7], fields[8]


def check_archive(infos: list[zipfile.ZipInfo], limits: ArchiveLimits) -> None:
    if len(infos) > limits.max_entries:
        raise CorruptInput(f"the archive has {len(infos)} entries (limit {limits.max_entries})")
    total = 0
    for info in infos:
        total += info.file_size
        if info.file_size > limits.ratio_floor_bytes:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > limits.max_ratio:
                raise CorruptInput(
                    f"archive entry {info.filename!r} expands {ratio:.0f}:1 "
                    f"(limit {limits.max_ratio:.0f}:1): a decompression bomb"
                )
    if total > limits.max_unpacked_bytes:
        raise ResourceLimit(
            f"the archive unpacks to {total // MIB} MiB, above the "
            f"{limits.max_unpacked_bytes // MIB} MiB this memory ceiling allows"
        )


# What zipfile raises on a damaged archive: a bad structure, a name that is not the UTF-8
# its flag says it is, compressed data its decompressor refuses (deflate, bzip2, LZMA).
_DAMAGED_ARCHIVE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    UnicodeDecodeError,
)
# OSErrors that are the archive's, not the disk's: EINVAL when the directory puts an
# entry before the start of the file (zipfile seeks there), no errno from bz2's
# "Invalid data stream".
_DAMAGED_ARCHIVE_ERRNOS = frozenset({errno.EINVAL, None})


@contextlib.contextmanager
def damage_is_corrupt(fmt: DocFormat) -> Iterator[None]:
    """What zipfile raises on a damaged archive, in the block, as ``CorruptInput``."""
    try:
        yield
    except _DAMAGED_ARCHIVE as exc:
        raise CorruptInput(f"the {fmt} archive is damaged: {exc}") from exc
    except OSError as exc:
        if exc.errno not in _DAMAGED_ARCHIVE_ERRNOS:
            raise
        raise CorruptInput(f"the {fmt} archive is damaged: {exc}") from exc
    except NotImplementedError as exc:  # unsupported compression method
        raise CorruptInput(f"the {fmt} archive uses an unsupported compression: {exc}") from exc


def refuse_ambiguous_names(infos: list[zipfile.ZipInfo], fmt: DocFormat) -> None:
    """Refuse a package in which one part name stands for two entries.

    Readers disagree on such a package: zipfile (which python-docx, python-pptx, openpyxl
    and docling's own package checks all read with) takes the last entry of a name,
    others the first, and Office refuses it. OPC compares part names case-insensitively
    (ECMA-376 Part 2), so entries whose names differ only in case are one part too.
    With every name unique, each name resolves to the one entry the inspection scans:
    docling cannot read other bytes for a part than those inspected here.
    """
    seen: dict[str, str] = {}
    for info in infos:
        name, key = info.filename, info.filename.casefold()
        other = seen.get(key)
        if other is None:
            seen[key] = name
            continue
        which = (
            f"two entries named {name!r}"
            if other == name
            else f"entries {other!r} and {name!r}, one part name in two cases"
        )
        raise CorruptInput(f"the {fmt} package has {which}: which one a reader takes is ambiguous")


# General purpose flag bit 0: the entry is encrypted (ZipCrypto or, with bit 6, strong
# encryption). No Office application writes these; zipfile refuses to read them.
_ZIP_ENCRYPTED = 0x1


def refuse_encrypted_entries(infos: list[zipfile.ZipInfo], fmt: DocFormat) -> None:
    encrypted = [info.filename for info in infos if info.flag_bits & _ZIP_ENCRYPTED]
    if encrypted:
        raise UnsupportedFeature(
            f"the {fmt} archive has {len(encrypted)} password-protected "
            f"(encrypted) entries, such as {encrypted[0]!r}",
            feature="encrypted",
        )
