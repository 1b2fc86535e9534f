"""Output files: the one helper every file the project saves goes through, and the checks made before work starts.

A regular file (or a new one) is written as a hidden temporary file beside it, flushed to disk and renamed
onto it, so a crash or a kill leaves the old content or the new, never half of it. A symlink keeps pointing
where it did: its target is replaced. A character device, a FIFO or a file this process has open
(``/dev/null``, a pipe, ``/dev/stdout``) is written through, as a shell redirection does; a folder, a block
device or a socket is refused. Errors name the path the caller gave, never the temporary file.
A file to be read is checked with ``not_a_file``, which says what a path is when it is not a regular file
(``regular_file`` raises it, naming the file); what reading a damaged ``.npz`` raises (``DAMAGED_ARCHIVE``) becomes
one error naming it (``damaged``).
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import re
import secrets
import stat
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any, Callable

TEMP_SUFFIX = ".tmp"
#: Names of temporary files: this module's ``.NAME.PID.HEX.tmp``, and ``NAME.XXXXXXXX.tmp`` of mkstemp before it.
TEMP_NAME = re.compile(r"\..+\.\d+\.[0-9a-f]{8}\.tmp|[^.].*\.[a-z0-9_]{8}\.tmp")
#: What reading a damaged or truncated ``.npz`` (numpy's zip of arrays) raises, besides ValueError.
DAMAGED_ARCHIVE = (OSError, EOFError, zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError)


def named(err: OSError, path: str | os.PathLike) -> OSError:
    """``err`` again, naming ``path`` (the user's path) instead of whatever file it named (its class follows errno)."""
    return OSError(err.errno, err.strerror or str(err), os.fspath(path))


def damaged(name: str, err: BaseException) -> ValueError:
    """The error for the archive ``name`` (what a message calls it, its path included) whose reading raised ``err``."""
    return ValueError(f"{name}: unreadable, damaged or truncated ({type(err).__name__}: {err})")


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, as a message names it: "a folder", "a FIFO (named pipe)", ..."""
    kinds = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((kind for test, kind in kinds if test(mode)), "not a regular file")


def not_a_file(path: str | os.PathLike) -> str | None:
    """None when ``path`` leads to a regular file (links followed); else what is wrong, to follow ``"PATH: "``.

    Files are read only after this check, so a FIFO or a device (``/dev/zero``) never blocks or fills memory.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "is a link to a missing file" if os.path.islink(path) else "no such file"
    except OSError as err:  # a folder on the way that may not be searched, a loop of links, a name too long
        return (err.strerror or str(err)).lower()
    return None if stat.S_ISREG(mode) else f"is {file_kind(mode)}, not a regular file"


def regular_file(path: str | os.PathLike, what: str) -> Path:
    """``path`` as a Path where it leads to a regular file; else ValueError ``"{what} {path}: "`` and what it is
    (``not_a_file``): every command calls it before it reads a file the user names, so a FIFO, a device or a folder
    is refused by name and never opened."""
    problem = not_a_file(path)
    if problem is not None:
        raise ValueError(f"{what} {os.fspath(path)}: {problem}")
    return Path(path)


def read_json(path: str | os.PathLike) -> tuple[Any, str | None]:
    """The JSON value in the file ``path`` and None, or None and what is wrong with the file, to follow ``"PATH "``
    (``not_a_file``'s reasons, unreadable, not valid JSON)."""
    problem = not_a_file(path)
    if problem is not None:
        return None, problem
    try:
        return json.loads(Path(path).read_bytes()), None
    except OSError as err:
        return None, f"cannot be read ({err.strerror or err})"
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        return None, f"is not valid JSON ({str(err)[:100]})"


def _refused(path: str | os.PathLike, mode: int) -> OSError:
    if stat.S_ISDIR(mode):
        return IsADirectoryError(errno.EISDIR, "is a folder, not a file", os.fspath(path))
    return OSError(errno.EINVAL, f"is {file_kind(mode)}: refusing to write over it", os.fspath(path))


def _own_descriptor(path: str | os.PathLike) -> int | None:
    """N when ``path`` leads to ``/proc/self/fd/N`` (``/dev/stdout``, ``/dev/fd/1``): a file this process has open."""
    link, fds = os.path.abspath(path), f"/proc/{os.getpid()}/fd"
    for _ in range(40):  # the kernel's limit on links followed
        if os.path.realpath(os.path.dirname(link)) == fds and os.path.basename(link).isdigit():
            return int(os.path.basename(link))
        if not os.path.islink(link):
            return None
        link = os.path.join(os.path.dirname(link), os.readlink(link))
    return None


def output_target(path: str | os.PathLike) -> tuple[Path, bool]:
    """The file writing ``path`` changes (a symlink's final target) and whether it is written through.

    Written through: a device, a FIFO, and a file this process has open (``/dev/stdout`` redirected to a
    file, whose content so far must stay).
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None  # a new file (or a symlink to one): created where the link points
    except OSError as err:
        raise named(err, path) from None
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or _own_descriptor(path) is not None):
        return Path(path), True
    if mode is not None and not stat.S_ISREG(mode):
        raise _refused(path, mode)
    if mode is not None and not os.access(path, os.W_OK):
        raise PermissionError(errno.EACCES, "Permission denied (the file is read-only)", os.fspath(path))
    return Path(os.path.realpath(path)), False


def _create_temp(target: Path, path: str | os.PathLike) -> tuple[int, Path]:
    """A new hidden temporary file beside ``target``: its descriptor and path (errors name ``path``)."""
    while True:
        temp = target.parent / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temp  # mode honours umask
        except FileExistsError:
            continue
        except OSError as err:
            raise named(err, path) from None


def _open_stream(path: str | os.PathLike) -> int:
    """Open a device, FIFO or descriptor for writing, without waiting for a reader that may never come."""
    own = _own_descriptor(path)
    if own is not None:
        return os.dup(own)  # shares the offset: a redirected stdout goes on after what we write
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as err:
        if err.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "a FIFO that nobody reads", os.fspath(path)) from None
        raise named(err, path) from None
    os.set_blocking(fd, True)
    return fd


def _sync_folder(folder: Path) -> None:
    """Make a rename durable where the platform allows it (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class AtomicWriter:
    """``file`` writes ``path``: a temporary file that ``commit`` renames onto it and ``abort`` removes.

    As a context manager it commits on a normal exit and aborts on any exception (KeyboardInterrupt
    included), so ``path`` keeps its old content. Devices and FIFOs are written directly (no temporary file).
    """

    def __init__(self, path: str | os.PathLike, binary: bool = False):
        self.path = path
        self.target, self.stream = output_target(path)
        self.temp_path: Path | None = None
        if self.stream:
            fd = _open_stream(path)
        else:
            fd, self.temp_path = _create_temp(self.target, path)
        text: dict[str, Any] = {} if binary else {"encoding": "utf-8", "newline": "\n"}
        self.file: IO[Any] = os.fdopen(fd, "wb" if binary else "w", **text)

    def write(self, data: Any) -> None:
        """Write ``data`` (str, or bytes when binary); an OSError (a full disk) names ``path``."""
        try:
            self.file.write(data)
        except OSError as err:
            raise named(err, self.path) from None

    def commit(self) -> None:
        """Flush to disk and rename onto the target (a no-op once committed or aborted)."""
        if self.file.closed:
            return
        try:
            self.file.flush()
            if not self.stream:
                os.fsync(self.file.fileno())
            self.file.close()
            if self.temp_path is not None:
                os.replace(self.temp_path, self.target)
        except BaseException as err:
            self.abort()
            if isinstance(err, OSError):
                raise named(err, self.path) from None
            raise
        if not self.stream:
            _sync_folder(self.target.parent)

    def abort(self) -> None:
        """Drop what was written; the target keeps its old content."""
        try:
            self.file.close()
        except OSError:
            pass  # the flush of a full disk failing again: the error being handled already says so
        if self.temp_path is not None:
            self.temp_path.unlink(missing_ok=True)

    def __enter__(self) -> "AtomicWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def write_atomic(path: str | os.PathLike, write: Callable[[IO[Any]], object], binary: bool = False) -> Path:
    """Call ``write(file)`` on an AtomicWriter of ``path`` and commit it; return ``path``."""
    with AtomicWriter(path, binary) as writer:
        try:
            write(writer.file)
        except OSError as err:
            raise named(err, path) from None
    return Path(path)


def check_writable(path: str | os.PathLike, folder: bool = False) -> None:
    """OSError naming ``path`` unless a file (``folder``: files in a folder) could be written there now.

    Folders missing on the way are made by the writers, so the nearest existing one must take new files.
    """
    if folder:
        where = Path(path)
    else:
        target, stream = output_target(path)
        if stream:
            return
        where = target.parent
    while not os.path.exists(where) and where != where.parent:
        where = where.parent
    if not where.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "is not a folder", os.fspath(where))
    fd, temp = _create_temp(where / "probe", path)
    os.close(fd)
    temp.unlink()


def remove_temps(folder: str | os.PathLike) -> list[Path]:
    """Remove the temporary files writers killed mid-write left in ``folder``; call only while no writer uses it."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    stale = [p for p in folder.iterdir() if TEMP_NAME.fullmatch(p.name) and p.is_file() and not p.is_symlink()]
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


def read_toml(path: Path, what: str) -> dict:
    """A TOML file's contents (the standard library's ``tomllib``, or ``tomli`` on Python 3.10); ValueError starting
    ``"{what} {path}: "`` for a path that is not a regular file (``regular_file``), a file that cannot be read, is not
    UTF-8 text or is not valid TOML, or one too large for the memory this process may take."""
    toml = importlib.import_module("tomllib" if importlib.util.find_spec("tomllib") else "tomli")
    regular_file(path, what)
    try:
        return toml.loads(path.read_text(encoding="utf-8"))
    except MemoryError:
        raise ValueError(f"{what} {path}: out of memory reading it ({os.path.getsize(path):,} bytes)") from None
    except OSError as e:
        raise ValueError(f"{what} {path}: cannot read it ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{what} {path}: not a UTF-8 text file") from None
    except (toml.TOMLDecodeError, RecursionError) as e:
        raise ValueError(f"{what} {path}: not valid TOML ({str(e)[:200] or 'nested too deeply'})") from None
