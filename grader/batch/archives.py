"""Extract a zip someone else made, safely: nothing outside the target folder, no links,
bounded memory and disk.

Every member is streamed in small chunks and counted as it is written, so the sizes a
zip's headers claim are never trusted: a member stops at `member_bytes`, an archive at
`archive_bytes`, all the archives of a batch at `batch_bytes`; a member past `ratio_floor`
bytes that expands more than `ratio` times its compressed size is a zip bomb, and an
archive with more than `members` entries is read only up to that count. Symbolic links,
absolute names, `..`, names nested deeper than discovery reads (grader/folders.py's MAX_DEPTH) and
names the file system cannot hold are never written, so every tree extracted is shallow. Each
member left out gets a note naming it and why. `copy_file` copies one loose file the same way: no
link followed, bounded size.

A member's name is read as `unzip` reads it (`member_name`), so that one student keeps one id whatever
made the zip: the name flagged UTF-8, else the name in Info-ZIP's Unicode Path extra field when that
field is of this very name, else the name's bytes as UTF-8 (Info-ZIP `zip` on Linux and macOS's
Archive Utility write UTF-8 without the flag), and only bytes that are not UTF-8 as IBM code page 437,
the zip format's own.
"""

from __future__ import annotations

import errno
import os
import stat
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grader.errors import NotAnArchive
from grader.folders import MAX_DEPTH, MAX_ENTRIES

CHUNK = 64 * 1024
NAME_BYTES = 255
"""The longest name of one file or folder most file systems hold (a member's longer part is skipped)."""
UTF8_FLAG = 0x800
"""The general-purpose bit saying a member's name is UTF-8 (APPNOTE.TXT 4.4.4, bit 11)."""
UNICODE_PATH = 0x7075
"""Info-ZIP's Unicode Path extra field: version 1, the CRC-32 of the header's name, the name in UTF-8 (4.6.9)."""
PATH_BYTES = 1_024
"""The longest member name written, in bytes (a member's name can be 64 KB; the staging folder's path and
this stay under the 4,096 bytes a path may take)."""


@dataclass(frozen=True)
class ArchiveLimits:
    member_bytes: int = 20 * 2**20
    """Largest file taken from an archive (or from a folder)."""
    archive_bytes: int = 200 * 2**20
    """Most bytes written out of one archive."""
    members: int = MAX_ENTRIES
    """Most entries read from one archive."""
    ratio: float = 100.0
    """Largest expansion (uncompressed / compressed) of a member past ratio_floor bytes."""
    ratio_floor: int = 2**20
    batch_bytes: int = 2 * 2**30
    """Most bytes written out of all the archives of one batch (a class zip of student zips)."""


@dataclass
class Budget:
    """The limits every archive of a batch is read within, and the bytes still allowed out of archives in this batch
    (at first, the limits' batch_bytes), shared by every extract()."""

    limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    left: int = -1

    def __post_init__(self):
        if self.left < 0:
            self.left = self.limits.batch_bytes


def extract(
    archive: Path,
    target: Path,
    label: str,
    note: Callable[[str, str], None],
    skip: Callable[[tuple[str, ...]], str | None],
    budget: Budget | None = None,
) -> Path:
    """Extract the members `skip` does not refuse into `target` (created); the folder.

    `label` names the archive in notes, each told as `note(name, why)`; `skip(parts)` gets a
    member's path parts and returns why to leave it out, or None to extract it; `budget` is
    shared by the batch's archives and spent here, with the limits they are read within.
    """
    budget = budget or Budget()
    limits = budget.limits
    target.mkdir(parents=True)
    with _open_zip(archive, label, limits) as zf:
        infos = _first_members(zf.infolist(), label, note, limits)
        size = archive.stat().st_size
        written = 0
        for info in infos:
            where = f"{label}/{member_name(info)}"
            if info.is_dir():
                continue
            parts, why = _left_out(info, skip, limits, written, budget)
            if why is None:
                out = target.joinpath(*parts)
                got, why = _copy_member(
                    zf, info, out, budget, min(info.compress_size, size), limits.archive_bytes - written
                )
                written += got  # a dropped member's bytes count too: they were decompressed
                budget.left -= got
            if why:
                note(where, why)
    return target


def _open_zip(archive: Path, label: str, limits: ArchiveLimits) -> zipfile.ZipFile:
    """The archive opened, or NotAnArchive (unreadable, or a table of contents too big to read)."""
    try:
        _check_directory(archive, label, limits)
        return zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise NotAnArchive(f"{label}: not a readable zip ({exc}); skipped") from None


def _first_members(
    infos: list[zipfile.ZipInfo], label: str, note: Callable[[str, str], None], limits: ArchiveLimits
) -> list[zipfile.ZipInfo]:
    """The entries read: at most limits.members of them (a note says how many more there were)."""
    if len(infos) > limits.members:
        note(
            label,
            f"holds {len(infos):,} entries; only the first {limits.members:,} were read, "
            f"the other {len(infos) - limits.members:,} skipped",
        )
        infos = infos[: limits.members]
    return infos


def _left_out(
    info: zipfile.ZipInfo,
    skip: Callable[[tuple[str, ...]], str | None],
    limits: ArchiveLimits,
    written: int,
    budget: Budget,
) -> tuple[tuple[str, ...], str | None]:
    """A member's path parts, and why it is left out before a byte of it is read (None: extract it)."""
    parts, why = _parts(member_name(info))
    if why is None and stat.S_ISLNK(info.external_attr >> 16):
        why = "a symbolic link; not followed"
    if why is None:
        why = skip(parts)
    if why is None and info.file_size > limits.member_bytes:
        why = f"larger than {size_text(limits.member_bytes)} ({size_text(info.file_size)} uncompressed); skipped"
    if why is None and written >= limits.archive_bytes:
        why = f"skipped: the archive already gave {size_text(limits.archive_bytes)}, its limit"
    if why is None and budget.left <= 0:
        why = f"skipped: the batch's archives already gave {size_text(limits.batch_bytes)}, its limit"
    return parts, why


def member_name(info: zipfile.ZipInfo) -> str:
    """A member's name as `unzip` reads it (see the module's docstring); zipfile's own reading (code page 437 for
    a name not flagged UTF-8) where no other applies."""
    if info.flag_bits & UTF8_FLAG:
        return info.filename
    try:
        raw = info.orig_filename.encode("cp437")  # the header's bytes again: zipfile decoded them as cp437
    except UnicodeEncodeError:
        return info.filename
    name = _unicode_path(info.extra, raw)
    if name is None:
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            return info.filename
    return name.split("\x00", 1)[0]  # as zipfile cuts a name at a NUL


def _unicode_path(extra: bytes, raw: bytes) -> str | None:
    """The UTF-8 name an Info-ZIP Unicode Path field of `extra` gives, if the field is of version 1 and of the name
    `raw` (its CRC-32 the name's: a field of a name renamed since is stale), else None. The fields are walked by
    their lengths, each read once (at most 64 KB of them)."""
    at = 0
    while at + 4 <= len(extra):
        kind = int.from_bytes(extra[at : at + 2], "little")
        size = int.from_bytes(extra[at + 2 : at + 4], "little")
        data = extra[at + 4 : at + 4 + size]
        at += 4 + size
        if kind != UNICODE_PATH or len(data) < 5 or data[0] != 1:
            continue
        if int.from_bytes(data[1:5], "little") != zlib.crc32(raw):
            return None
        try:
            return data[5:].decode("utf-8") or None
        except UnicodeDecodeError:
            return None
    return None


def _check_directory(archive: Path, label: str, limits: ArchiveLimits) -> None:
    """Refuse an archive whose table of contents is too big to read: zipfile reads it whole."""
    end_record = getattr(zipfile, "_EndRecData", None)
    if end_record is None:
        return
    with open(archive, "rb") as f:
        record = end_record(f)
    if record is None:
        raise NotAnArchive(f"{label}: not a readable zip; skipped")
    directory_bytes = record[zipfile._ECD_SIZE]  # type: ignore[attr-defined]  # private, so not in typeshed's zipfile
    if directory_bytes > limits.members * 512:
        raise NotAnArchive(
            f"{label}: its table of contents takes {size_text(directory_bytes)}, "
            f"too many entries (the limit is {limits.members:,}); skipped"
        )


def _parts(name: str) -> tuple[tuple[str, ...], str | None]:
    """A member's path parts, or why it may not be written (absolute, climbing out with .., nested deeper than
    discovery reads, or a name the file system cannot hold)."""
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return (), "an absolute path; skipped"
    parts = tuple(p for p in name.replace("\\", "/").split("/") if p not in ("", "."))
    if ".." in parts:
        return (), "a path climbing out with '..'; skipped"
    if not parts:
        return (), "an empty name; skipped"
    if len(parts) > MAX_DEPTH:
        return (), f"nested more than {MAX_DEPTH} folders deep; skipped"
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > PATH_BYTES:
        return (), f"a name of {size:,} bytes (the most written is {PATH_BYTES:,}); skipped"
    if any(len(p.encode("utf-8", "surrogatepass")) > NAME_BYTES for p in parts):
        return (), f"a file or folder name longer than {NAME_BYTES} bytes, which no file system holds; skipped"
    return parts, None


def _copy_member(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    out: Path,
    budget: Budget,
    packed: int,
    room: int,
) -> tuple[int, str | None]:
    """Stream one member to `out`, counting, within the archive's `room` and the batch's budget; (bytes kept, why it
    was dropped or None)."""
    limits, batch_room = budget.limits, budget.left
    got = 0
    why = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        # "x": never write through anything already there (a folder, a second member of the same name)
        with zf.open(info) as src, open(out, "xb") as dst:
            while chunk := src.read(CHUNK):
                got += len(chunk)
                why = _past_limit(got, limits, packed, room, batch_room)
                if why:
                    break
                dst.write(chunk)
    except FileExistsError:
        return 0, "a second member with the same name (or a name already used by a folder); skipped"
    except RuntimeError as exc:  # encrypted
        why = f"cannot be read ({exc}); skipped"
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError, ValueError) as exc:
        why = f"cannot be read ({type(exc).__name__}: {exc}); skipped"
    if why:
        try:
            out.unlink()
        except OSError:
            pass
        return got, why
    return got, None


def _past_limit(got: int, limits: ArchiveLimits, packed: int, room: int, batch_room: int) -> str | None:
    """Why a member is dropped once `got` bytes of it are out (packed: its compressed size), or None."""
    if got > limits.member_bytes:
        return f"larger than {size_text(limits.member_bytes)} once uncompressed; skipped"
    if got > room:
        return f"skipped: the archive gave more than {size_text(limits.archive_bytes)}, its limit"
    if got > batch_room:
        return f"skipped: the batch's archives gave more than {size_text(limits.batch_bytes)}, its limit"
    if got > limits.ratio_floor and got > limits.ratio * max(packed, 1):
        return f"expands more than {limits.ratio:g} times its compressed size (a zip bomb?); skipped"
    return None


def size_text(n: int) -> str:
    return f"{n / 2**20:.0f} MB" if n >= 2**20 else f"{n:,} bytes"


def copy_file(src: Path, dst: Path, limit: int) -> str | None:
    """Copy a regular file without following a link, at most `limit` bytes; why it failed, or None."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return "a symbolic link; not followed" if exc.errno == errno.ELOOP else f"cannot be read ({exc.strerror})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "not a regular file"
        copied = 0
        with open(dst, "xb") as out:
            while chunk := os.read(fd, CHUNK):
                copied += len(chunk)
                if copied > limit:
                    break
                out.write(chunk)
        if copied > limit:
            dst.unlink()
            return f"larger than {size_text(limit)}"
        return None
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    finally:
        os.close(fd)
