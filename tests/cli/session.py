"""Driving ``trinity`` at a pseudo-terminal as a person types: keys in, what the screen shows out.

Unlike :func:`tests.terminal.run_on_terminal`, which puts one output stream on
a terminal, a :class:`TerminalSession` gives the program a terminal for all
three streams (and as its controlling terminal, so that ``\\x03`` is Ctrl-C
and ``\\x04`` Ctrl-D), as a shell window does: readline, the prompt, the
banner and completion then behave as they do for a user.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

#: Escape sequences a terminal interprets (colours, bracketed paste, cursor moves).
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")


def plain(drawn: str) -> str:
    """What was drawn, without escape sequences and carriage returns."""
    return _ESCAPES.sub("", drawn)


def _controlling_terminal() -> None:  # pragma: no cover - runs in the child
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    # A test runner's worker may ignore SIGINT, and Python keeps an ignored
    # SIGINT ignored: Ctrl-C must reach the program as it does from a shell.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class TerminalSession:
    """``trinity`` (or any program) running at a pseudo-terminal of 24 x 120.

    Args:
        args: the arguments after ``python -m trinity_dbapi.cli``.
        env: extra environment variables (``TRINITY_HISTORY`` defaults to
            a file nobody keeps, ``INPUTRC`` to none, ``TERM`` to ``xterm``).
        cwd: the working directory.
    """

    def __init__(
        self,
        args: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        controller, terminal = pty.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
        environment = {
            **os.environ,
            "TRINITY_HISTORY": os.devnull,
            "INPUTRC": os.devnull,
            "TERM": "xterm",
            "PAGER": "cat",
            **(env or {}),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "trinity_dbapi.cli", *args],
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            env=environment,
            cwd=cwd,
            preexec_fn=_controlling_terminal,  # noqa: PLW1509 - no threads in the test process's fork path
        )
        os.close(terminal)
        self._controller = controller
        self.drawn = ""  # everything the terminal received, as drawn
        self._seen = 0  # how much of plain(drawn) expect() has consumed

    @property
    def screen(self) -> str:
        """Everything received so far, without escape sequences."""
        return plain(self.drawn)

    def send(self, keys: str) -> None:
        """Type ``keys`` (``\\t`` is Tab, ``\\r`` Enter, ``\\x04`` Ctrl-D)."""
        os.write(self._controller, keys.encode())

    def _read(self, timeout: float) -> bool:
        if not select.select([self._controller], [], [], timeout)[0]:
            return False
        try:
            chunk = os.read(self._controller, 65536)
        except OSError:  # EIO: the program closed the terminal
            return False
        self.drawn += chunk.decode(errors="replace")
        return bool(chunk)

    def expect(self, pattern: str, *, timeout: float = 60) -> str:
        """Wait until ``pattern`` (a regular expression) shows after what was expected before.

        Returns:
            The text from the previous match's end to this match's end.

        Raises:
            AssertionError: it did not show within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            found = re.compile(pattern).search(self.screen, self._seen)
            if found is not None:
                text = self.screen[self._seen : found.end()]
                self._seen = found.end()
                return text
            left = deadline - time.monotonic()
            if left <= 0 or (not self._read(left) and self.process.poll() is not None):
                raise AssertionError(f"{pattern!r} not shown; the screen:\n{self.screen}")

    def close(self, *, timeout: float = 60) -> int:
        """Wait for the program to end (reading what it still draws); its exit code."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(max(0.0, deadline - time.monotonic())):
            pass
        try:
            return self.process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            raise
        finally:
            os.close(self._controller)
