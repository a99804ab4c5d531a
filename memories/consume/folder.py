"""The watched folder on disk: which files in an inbox wait to be read, which are ignored, claiming one
by an atomic rename into processing/<claim>/, and filing it into done/ or failed/ with its reason.

An inbox is the folder files are dropped into: the watched folder itself (one account), or one
subfolder of it per account. Each inbox holds its own processing/, done/ and failed/. Nothing here
follows a symbolic link: entries are looked at with lstat, renames move the link itself, and files
are opened with O_NOFOLLOW.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

PROCESSING, DONE, FAILED = "processing", "done", "failed"
RESERVED = frozenset({PROCESSING, DONE, FAILED})
REASON_SUFFIX = ".reason.txt"
# Deeper than any scanner or sync tool nests; a loop of bind mounts ends here.
MAX_DEPTH = 32

# Files that are still being written by the program that will rename them when it is done, or that
# belong to an editor or the desktop rather than to the person: never read, never moved.
TEMP_SUFFIXES = (".part", ".partial", ".crdownload", ".download", ".tmp", ".temp", ".swp", ".filepart", ".!ut")
DESKTOP_FILES = frozenset({"thumbs.db", "desktop.ini", "icon\r"})


def ignored(name: str) -> bool:
    """Hidden files (.DS_Store, LibreOffice's .~lock.*#, rsync's .name.XXXX), Office's ~$ owner files,
    editor backups (name~), downloads and copies in progress (.part, .crdownload, .tmp …)."""
    lowered = name.lower()
    return (
        name.startswith((".", "~$"))
        or name.endswith("~")
        or lowered.endswith(TEMP_SUFFIXES)
        or lowered in DESKTOP_FILES
    )


@dataclass
class Inbox:
    """A folder files are dropped into, and the account they are filed into (None: nobody's, for the
    files at the top of a watched folder with one subfolder per account)."""

    root: Path
    owner: Any  # a user, or None
    label: str  # the account as the person knows it, or why there is none
    recursive: bool = True
    problem: str = ""  # why this inbox is not read now (it cannot be written to)

    @property
    def processing(self) -> Path:
        return self.root / PROCESSING

    def claim_path(self, claim: str, name: str) -> Path:
        return self.processing / claim / name


@dataclass(frozen=True)
class Entry:
    """A file waiting in an inbox: `name` is its path relative to the inbox (POSIX separators)."""

    path: Path
    name: str
    size: int
    mtime_ns: int
    kind: str  # file | link | other (a named pipe, socket or device: refused, never opened)

    @property
    def signature(self) -> tuple[int, int, str]:
        return (self.size, self.mtime_ns, self.kind)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "link"
    return "file" if stat.S_ISREG(mode) else "other"


def scan(inbox: Inbox) -> Iterator[Entry]:
    """Every file waiting in the inbox (its subfolders too when recursive), reserved folders, hidden
    folders and ignored files left out. A symbolic link is listed (to be refused), never entered."""
    yield from _scan(inbox.root, PurePosixPath(), inbox.recursive, 0)


def _scan(directory: Path, prefix: PurePosixPath, recursive: bool, depth: int) -> Iterator[Entry]:
    try:
        with os.scandir(directory) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    for entry in entries:
        if ignored(entry.name) or (depth == 0 and entry.name in RESERVED):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue  # gone since the listing
        name = str(prefix / entry.name)
        if stat.S_ISDIR(info.st_mode):
            if recursive and depth < MAX_DEPTH:
                yield from _scan(Path(entry.path), prefix / entry.name, recursive, depth + 1)
            continue
        yield Entry(Path(entry.path), name, info.st_size, info.st_mtime_ns, _kind(info.st_mode))


@dataclass(frozen=True)
class Claimed:
    """A file in processing/<claim>/<name>, with what it looked like when it was claimed."""

    claim: str
    name: str
    path: Path
    signature: tuple[int, int, str] | None = None


def claim(inbox: Inbox, entry: Entry) -> Claimed | None:
    """Take the file by renaming it into processing/<claim>/, keeping its relative name. Only one
    rename of a path succeeds, so two watchers never take one file; None when it was gone already
    (renamed, deleted, or taken by another)."""
    claim_id = uuid.uuid4().hex
    target = inbox.claim_path(claim_id, entry.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(entry.path, target)
    except FileNotFoundError:
        remove_claim_dir(inbox, claim_id)
        return None
    return Claimed(claim_id, entry.name, target, entry.signature)


def claims(inbox: Inbox) -> Iterator[Claimed]:
    """What waits in processing/: each claim folder's file (a watcher that stopped left it there). An
    empty claim folder (stopped between its mkdir and the rename) is removed; a file put straight
    into processing/ by hand is claimed like a new one."""
    try:
        with os.scandir(inbox.processing) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and _is_claim_id(entry.name):
            files = list(_scan(Path(entry.path), PurePosixPath(), True, 0))
            if not files:
                with contextlib.suppress(OSError):
                    _remove_empty_tree(Path(entry.path))
                continue
            for found in files:
                yield Claimed(entry.name, found.name, found.path, None)
        elif not ignored(entry.name):
            info = entry.stat(follow_symlinks=False)
            stray = Entry(Path(entry.path), entry.name, info.st_size, info.st_mtime_ns, _kind(info.st_mode))
            taken = claim(inbox, stray)
            if taken is not None:
                yield Claimed(taken.claim, taken.name, taken.path, None)


def _is_claim_id(name: str) -> bool:
    return len(name) == 32 and all(c in "0123456789abcdef" for c in name)


def current_signature(path: Path) -> tuple[int, int, str] | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    return (info.st_size, info.st_mtime_ns, _kind(info.st_mode))


def destination(inbox: Inbox, kind: str, name: str) -> str:
    """A free name under done/ or failed/ for `name` (its subfolders kept): "letter.pdf", else
    "letter (2).pdf", "letter (3).pdf" … so nothing filed earlier is ever overwritten."""
    relative = PurePosixPath(name)
    stem, suffix = _split_name(relative.name)
    for n in range(1, 10_000):
        candidate = relative.with_name(relative.name if n == 1 else f"{stem} ({n}){suffix}")
        full = inbox.root / kind / candidate
        reason = full.with_name(full.name + REASON_SUFFIX)
        if not os.path.lexists(full) and not os.path.lexists(reason):
            return str(PurePosixPath(kind) / candidate)
    return str(PurePosixPath(kind) / relative.with_name(f"{stem} ({uuid.uuid4().hex[:8]}){suffix}"))


def _split_name(name: str) -> tuple[str, str]:
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:
        return name, ""
    return stem, "." + suffix


@dataclass
class Filed:
    moved: bool  # the file was moved (False: it was no longer in processing/)
    destination: str
    notes: list[str] = field(default_factory=list)


def file_away(inbox: Inbox, claimed: Claimed, dest: str, reason: str) -> Filed:
    """Write <dest>.reason.txt, then move the file to dest (relative to the inbox). Both steps can be
    repeated: after a restart the reason is written again and a file already moved is left alone."""
    target = inbox.root / dest
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target.with_name(target.name + REASON_SUFFIX), reason)
    moved = False
    if os.path.lexists(claimed.path):
        os.rename(claimed.path, target)
        moved = True
    remove_claim_dir(inbox, claimed.claim)
    return Filed(moved, dest)


def write_atomic(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def remove_claim_dir(inbox: Inbox, claim_id: str) -> None:
    path = inbox.processing / claim_id
    with contextlib.suppress(FileNotFoundError):
        _remove_empty_tree(path)


def _remove_empty_tree(path: Path) -> None:
    """Remove a claim folder and its empty subfolders, never a file (a file left in it stays claimed)."""
    for current, dirs, files in os.walk(path, topdown=False):
        if files:
            return
        for name in dirs:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(current, name))
    with contextlib.suppress(OSError):
        os.rmdir(path)


def link_target(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def points_inside(inbox: Inbox, path: Path) -> bool:
    """Whether a symbolic link resolves to somewhere inside the inbox (told in the reason only: links
    are refused either way, since a link to a file inside would read that file twice)."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(inbox.root.resolve())
    except (OSError, ValueError):
        return False


def writable_problem(root: Path) -> str:
    """Why the server cannot use this inbox (it must create processing/, done/ and failed/ in it and
    write there), or "" when it can. Creates the three folders, never the inbox itself: a folder that
    is missing may be a network drive not mounted yet, and files dropped later belong on the drive."""
    if not root.is_dir():
        return (
            f"{root} does not exist or is not a folder (a network drive not mounted?); create it, or set "
            "KYBERNESIS_CONSUME_DIR to the right folder"
        )
    try:
        for name in (PROCESSING, DONE, FAILED):
            (root / name).mkdir(exist_ok=True)
        # The files dropped are moved out of the inbox, so it must be writable, and so must the three.
        for folder in (root, *(root / name for name in (PROCESSING, DONE, FAILED))):
            probe = folder / f".probe-{uuid.uuid4().hex[:8]}"
            probe.write_bytes(b"")
            probe.unlink()
    except OSError as exc:
        user = _process_user()
        return (
            f"the server cannot write to {root}: {exc.strerror or exc}. It moves each file it reads into "
            f"processing/, done/ or failed/ there, so the account it runs as ({user}) needs write access"
        )
    return ""


def _process_user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"


@dataclass
class Read:
    """What reading a claimed file gave: its bytes (`data`, None when it was too large to read), or
    why it was not read. `wait`: it changed since it looked complete, so it is being written still."""

    data: bytes | None = None
    size: int = 0
    refused: str = ""
    vanished: str = ""
    wait: bool = False


def read_claimed(claimed: Claimed, *, max_bytes: int, inside: bool | None = None) -> Read:
    """Read a claimed file whole, without following a link, and make sure of what was read: the same
    inode, size and mtime before and after, so a file renamed, deleted or written to meanwhile is never
    taken half-way."""
    try:
        fd = os.open(claimed.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return Read(vanished="the file was renamed or deleted before it could be read")
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            where = "inside" if inside else "outside"
            return Read(
                refused=f"a symbolic link (to {link_target(claimed.path)}, {where} the watched folder): links are "
                "never followed, so nothing was read"
            )
        return Read(refused=f"the server may not read this file: {exc.strerror or exc}")
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            return Read(refused="not a regular file (a named pipe, socket or device): nothing was read")
        if claimed.signature is not None and claimed.signature[:2] != (before.st_size, before.st_mtime_ns):
            return Read(wait=True)
        if before.st_size > max_bytes:
            return Read(size=before.st_size)
        data = read_all(fd, before.st_size + 1)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if len(data) != before.st_size or (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        return Read(wait=True)
    now = current_inode(claimed.path)
    if now != before.st_ino:
        return Read(vanished="the file was renamed or deleted while it was being read: nothing was stored")
    return Read(data=data, size=len(data))


def read_all(fd: int, limit: int) -> bytes:
    parts, total = [], 0
    while total < limit:
        part = os.read(fd, min(1 << 20, limit - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
    return b"".join(parts)


def current_inode(path: Path) -> int | None:
    try:
        return os.lstat(path).st_ino
    except FileNotFoundError:
        return None
