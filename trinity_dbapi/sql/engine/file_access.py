"""Which local files ``COPY`` may read and write, and how they are opened.

``COPY`` is the one statement that names a file, and the driver, not
DuckDB, reads and writes it: the DuckDB sandbox (:mod:`.sandbox`) stays
closed. A connection reaches only the directories it was given,
``connect(..., file_access=["/data"])`` (the ``trinity`` shell, a local
user, is given the whole local file system); without them every ``COPY``
is refused.

A path is checked before anything is read or written:

* it is text without control characters (NUL, line breaks, ...), it names
  no URL or remote store (``s3://``, ``http://``, ``file://``: local paths
  only) and no ``..`` component;
* a relative path is taken from the process's working directory;
* its real path (every symbolic link followed) lies inside an allowed
  directory: a link inside one that points out of it is refused.

A file is then opened without following a symbolic link put in its place
after the check, and read only when it is a regular file (not a FIFO or a
device). A written file appears whole or not at all: the rows go to a
temporary file beside it, renamed into place at the end; an existing file
is replaced only with ``OVERWRITE``.

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from trinity_dbapi.errors import FileAccessError, OperationalError, ProgrammingError

__all__ = ["HOW", "allowed_directories", "open_for_read", "open_for_write", "resolve"]

#: How a connection is given file access, for messages.
HOW = 'connect(..., file_access=["/data"])'


def _odd_character(text: str) -> str | None:
    return next((c for c in text if ord(c) < 32 or ord(c) == 127), None)


def _is_url(text: str) -> bool:
    scheme, found, _ = text.partition("://")
    return (bool(found) and scheme.replace("+", "").replace("-", "").isalnum()) or (
        text.lower().startswith("file:")
    )


def allowed_directories(directories: object) -> tuple[str, ...]:
    """The real paths of the directories a connection may read and write files in.

    Args:
        directories: None (no file access), one path, or an iterable of
            paths (``str`` or ``os.PathLike``); each must be an existing
            local directory. A relative path is taken from the working
            directory.

    Raises:
        ProgrammingError: not paths, a URL, or a path that is no directory.
    """
    if directories is None:
        return ()
    if isinstance(directories, (str, os.PathLike)):
        directories = [directories]
    if isinstance(directories, (bytes, dict)) or not isinstance(directories, Iterable):
        raise ProgrammingError(
            f"file_access must be a list of directories, not {type(directories).__name__}: "
            f"write {HOW}"
        )
    found: list[str] = []
    for item in directories:
        if not isinstance(item, (str, os.PathLike)):
            raise ProgrammingError(
                f"file_access lists {item!r}, which is not a path: list directories as str, "
                f"as in {HOW}"
            )
        path = os.fspath(item)
        if not isinstance(path, str) or not path or _odd_character(path) or _is_url(path):
            raise ProgrammingError(
                f"file_access lists {path!r}, which is not a local directory path: list local "
                f"directories (no URLs, no control characters), as in {HOW}"
            )
        real = os.path.realpath(os.path.abspath(path))
        if not os.path.isdir(real):
            raise ProgrammingError(
                f"file_access lists {path!r}, which is not an existing directory: create it, "
                "or list the directory the files are in"
            )
        if real not in found:
            found.append(real)
    return tuple(found)


def _inside(path: str, directory: str) -> bool:
    """Whether ``path`` names something inside ``directory`` (not the directory itself)."""
    return path != directory and os.path.commonpath([path, directory]) == directory


def resolve(path: str, allowed: tuple[str, ...], what: str) -> str:
    """The real path of ``path`` when the connection may use it; nothing is read or written.

    Args:
        path: the file name as the statement wrote it.
        allowed: the connection's :func:`allowed_directories`.
        what: the statement, for messages (``COPY ... FROM``).

    Raises:
        FileAccessError: the connection has no file access, or the path
            breaks a rule above.
    """
    if not allowed:
        raise FileAccessError(
            path,
            f"{what} cannot use file {path!r}: this connection has no file access; the "
            f"application gives it the directories it may use with {HOW} (the trinity "
            "shell has it)",
        )
    odd = _odd_character(path)
    if odd is not None:
        raise FileAccessError(
            path,
            f"{what} refuses file name {path!r}: it holds the control character {odd!r}; "
            "name the file without control characters",
        )
    if _is_url(path):
        raise FileAccessError(
            path,
            f"{what} refuses {path!r}: COPY reads and writes local files only, never a URL "
            "or a remote store; write a local path (copy remote files with their own tools)",
        )
    parts = path.replace("\\", "/").split("/")
    if ".." in parts:
        raise FileAccessError(
            path,
            f"{what} refuses file name {path!r}: a '..' component is not allowed; write the "
            "path without '..'",
        )
    absolute = os.path.abspath(path)
    real = os.path.realpath(absolute)
    if not any(_inside(real, directory) for directory in allowed):
        linked = f" (a symbolic link leads to {real!r})" if real != absolute else ""
        raise FileAccessError(
            path,
            f"{what} refuses file {path!r}{linked}: it is outside the directories this "
            f"connection may use ({', '.join(allowed)}); use a file inside one of them, or "
            f"give the connection its directory with {HOW}",
        )
    return real


def open_for_read(real: str, shown: str) -> BinaryIO:
    """Open the regular file at ``real`` (from :func:`resolve`) for reading.

    Raises:
        ProgrammingError: no such file, or a folder.
        FileAccessError: a symbolic link or something other than a regular
            file (a FIFO, a device) stands there.
        OperationalError: the file cannot be read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise ProgrammingError(f"there is no file {shown!r}; check the path") from None
    except IsADirectoryError:
        raise ProgrammingError(f"{shown!r} is a folder, not a file; name a file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link put in place after the check
            raise FileAccessError(
                shown, f"{shown!r} became a symbolic link; name the file itself"
            ) from None
        raise OperationalError(
            f"cannot read {shown!r}: {exc.strerror}; check that the file is readable"
        ) from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        os.close(fd)
        raise ProgrammingError(f"{shown!r} is a folder, not a file; name a file")
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FileAccessError(
            shown, f"{shown!r} is not a regular file (a FIFO, socket or device); name a file"
        )
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


@contextlib.contextmanager
def open_for_write(real: str, shown: str, *, overwrite: bool) -> Iterator[BinaryIO]:
    """A file to write, which appears at ``real`` whole when the block ends without error.

    Raises:
        ProgrammingError: the folder does not exist.
        FileAccessError: the file exists and ``overwrite`` is false, or
            something other than a regular file stands there.
    """
    directory = os.path.dirname(real)
    if not os.path.isdir(directory):
        raise ProgrammingError(
            f"cannot write {shown!r}: the folder {directory!r} does not exist; create it first"
        )
    _check_target(real, shown, overwrite)
    import tempfile  # only here: connect() imports this module

    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".trinity-copy-", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # as open() would have made it, not mkstemp's 0600
        with os.fdopen(fd, "wb") as file:
            yield file
        if overwrite:
            _check_target(real, shown, overwrite)
            os.replace(temporary, real)
        else:
            try:
                os.link(temporary, real)  # fails when a file appeared meanwhile
            except FileExistsError:
                raise _exists(shown) from None
            os.unlink(temporary)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _check_target(real: str, shown: str, overwrite: bool) -> None:
    try:
        mode = os.lstat(real).st_mode
    except FileNotFoundError:
        return
    if not overwrite:
        raise _exists(shown)
    if not stat.S_ISREG(mode):
        raise FileAccessError(
            shown,
            f"cannot write {shown!r}: something other than a regular file (a folder, link or "
            "device) is there; name another file",
        )


def _exists(shown: str) -> FileAccessError:
    return FileAccessError(
        shown,
        f"file {shown!r} exists already, and COPY does not replace a file unless told: add "
        "the option OVERWRITE (COPY ... TO 'file' (OVERWRITE)), or name another file",
    )
