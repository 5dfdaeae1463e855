"""Running a program with one of its output streams on a pseudo-terminal, as a user's window."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
from collections.abc import Mapping, Sequence


def run_on_terminal(
    argv: Sequence[str],
    *,
    stream: str,
    sized: bool = True,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> tuple[int, str, str]:
    """Run ``argv`` with ``stream`` (``"stdout"`` or ``"stderr"``) on a pseudo-terminal.

    Args:
        argv: the program and its arguments.
        stream: which output goes to the terminal; the other one is piped.
        sized: give the terminal a size (120 x 24), as a terminal window does;
            a pseudo-terminal nobody sized reports 0 x 0.
        env: the environment (by default this process's).
        timeout: seconds to wait for output and for the exit.

    Returns:
        (exit code, what the piped stream got, what the terminal received).
    """
    controller, terminal = pty.openpty()
    if sized:
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    on_terminal = {"stdout": terminal} if stream == "stdout" else {"stderr": terminal}
    piped = "stderr" if stream == "stdout" else "stdout"
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        **on_terminal,  # type: ignore[arg-type]
        **{piped: subprocess.PIPE},  # type: ignore[arg-type]
        env=dict(env) if env is not None else None,
    )
    os.close(terminal)
    drawn = b""
    try:
        while select.select([controller], [], [], timeout)[0]:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the process closed its side
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(controller)
    pipe = getattr(process, piped)
    other = pipe.read() if pipe is not None else b""
    code = process.wait(timeout=timeout)
    if pipe is not None:
        pipe.close()
    return code, other.decode(), drawn.decode()
