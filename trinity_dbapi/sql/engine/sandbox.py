"""The sandbox of a session's private DuckDB: which files SQL can read.

The rule (docs/sql.md, "The sandbox"): the private DuckDB reads the files
under a local lakehouse root and nothing else, whatever characters the root's
name holds; for a remote root (``memory://``, ``s3://``, ...) it reads no
local file at all; it never spills to disk.

How DuckDB enforces it, and why the root is not handed over as it is named:
with ``enable_external_access = false`` DuckDB (2.x) checks every file a
statement opens against ``allowed_directories`` by text. Both the allowed
directory and the file are first made absolute and normalised *as text* (a
``\\`` counts as a separator on every OS, ``..`` removes the name before it),
then the longest existing prefix is resolved by ``realpath`` and the result
must start with an allowed directory. The operating system, though, opens the
name it was given. So a root named ``lakes/y\\..\\..\\..`` -- one legal POSIX
directory -- was read by DuckDB as ``/`` and allowed every file; a root with
``*`` or ``[`` in its name turns the table scans' paths into globs, and one
with ``=`` adds a bogus hive partition column.

The mechanism: each DuckDB database (:mod:`.duckdb_pool`: one per root,
shared by its sessions) makes a private directory (``mkdtemp``: mode 0700,
a generated name of letters, digits and ``_``, checked to be plain text) holding
one symbolic link, ``lake``, to the root's real path. DuckDB is given that
link as the allowed directory: the link's name reads the same as text and to
the OS, and DuckDB's ``realpath`` turns it into the root's exact real path,
whatever characters it has. Table scans name their files through the link
too (:attr:`Sandbox.visible_root`). The directory is removed when its
database closes (an idle one evicted, or at interpreter exit) or is
collected unclosed, only ever by the process that made it (not by a forked
child).

What no configuration of DuckDB can close: ``..`` right after a symbolic link
*inside* the root (``<root>/link/../x``) is removed as text before the check,
so it opens ``x`` beside the link's target. So this is the second wall: the
statement layer (:mod:`trinity_dbapi.sql.table_functions`) lets no user SQL
name a file at all (a whitelist of table functions that read none, no string
as a table), and the only paths DuckDB opens are those of trinity's own scans.

DuckDB adds its temporary directory to the allowed list (``<cwd>/.tmp`` for
an in-memory database, so SQL could read whatever lay there); spilling is
turned off instead (``temp_directory = ''``): a directory DuckDB writes to is
one SQL can name (``current_setting('temp_directory')``). The consequence: a
query whose working set exceeds DuckDB's ``memory_limit`` (80% of RAM by
default) fails with ``OperationalError`` (out of memory) instead of spilling.

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import weakref
from typing import TYPE_CHECKING

from trinity_dbapi.errors import OperationalError

if TYPE_CHECKING:
    import duckdb

#: Connect settings of every private DuckDB that belong to the sandbox: no
#: temporary directory, so nothing is spilled and nothing is added to the
#: allowed directories behind our back.
SANDBOX_CONFIG: dict[str, str] = {"temp_directory": ""}

#: Name of the link to the root inside a session's private directory.
LINK_NAME = "lake"

#: A path DuckDB reads as the OS does: absolute, only characters that are
#: neither separators nor glob nor escape characters, no ``.``/``..`` parts.
_PLAIN_PATH = re.compile(r"(/[A-Za-z0-9_][A-Za-z0-9_.+-]*)+")


class Sandbox:
    """What one DuckDB database may read (see the module docstring).

    Args:
        root: the local lakehouse root directory, or None for a remote
            lakehouse (then DuckDB may read no local file).

    Raises:
        OperationalError: the private directory cannot be made, or the
            system's temporary directory has a path DuckDB would misread.
    """

    def __init__(self, root: str | None) -> None:
        #: The private directory (None for a remote root).
        self.directory: str | None = None
        #: The path DuckDB reads the root's files through (None for a remote root).
        self.visible_root: str | None = None
        self._remove: weakref.finalize[[str, int], Sandbox] | None = None
        if root is None:
            return
        self.directory = directory = _private_directory()
        # Removed on close, or when the sandbox is garbage (a session dropped
        # without close), or at interpreter exit, whichever comes first.
        self._remove = weakref.finalize(self, _remove, directory, os.getpid())
        link = os.path.join(directory, LINK_NAME)
        try:
            os.symlink(os.path.realpath(root), link, target_is_directory=True)
        except OSError as exc:
            self.close()
            raise OperationalError(
                f"cannot link the lakehouse root {root!r} into the private directory "
                f"{directory!r} of this connection's DuckDB ({exc.strerror}): "
                "queries read table files through that link; make the temporary "
                "directory (TMPDIR) writable and on a file system with symbolic links"
            ) from None
        self.visible_root = link

    def confine(self, duck: duckdb.DuckDBPyConnection) -> None:
        """Allow ``duck`` the root's files only; must precede turning external access off."""
        if self.visible_root is not None:
            duck.execute("SET allowed_directories = ?", [[self.visible_root]])

    def close(self) -> None:
        """Remove the private directory (the link only; never what it points to)."""
        self.directory = self.visible_root = None
        if self._remove is not None:
            self._remove()


def _remove(directory: str, owner: int) -> None:
    if os.getpid() != owner:
        return  # a forked child exiting: the directory is its parent's, still in use
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(directory, LINK_NAME))
    # rmtree removes links without following them; a directory something
    # else already removed is no error.
    shutil.rmtree(directory, ignore_errors=True)


def _private_directory() -> str:
    """A new mode-0700 directory whose real path DuckDB reads as the OS does."""
    try:
        directory = os.path.realpath(tempfile.mkdtemp(prefix="trinity-sql-"))
    except OSError as exc:
        raise OperationalError(
            f"cannot make a private directory for this connection's DuckDB in "
            f"{tempfile.gettempdir()!r} ({exc.strerror}): set TMPDIR to a writable directory"
        ) from None
    if _PLAIN_PATH.fullmatch(directory) is None:
        shutil.rmtree(directory, ignore_errors=True)
        raise OperationalError(
            f"the temporary directory {tempfile.gettempdir()!r} has characters in its real "
            f"path ({directory!r}) that DuckDB reads differently from the OS (only letters, "
            "digits and '_', '.', '+', '-' are safe), so the sandbox of its queries could not "
            "hold: set TMPDIR to a directory with a plain path, such as /tmp"
        )
    return directory
