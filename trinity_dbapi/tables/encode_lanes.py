"""Encoding several Parquet files of one write at once, each file's steps in order.

Parquet encoding and compression run in C++ without the GIL, so two files
encode in about half the time of one after the other (1,050,000 rows of
two columns: 50 ms on one thread, 25 ms as two files on two). The writer
(:mod:`.writer`) hands each open file's steps (encode a row group, close
and store the file) to its own :class:`Lane`: a lane runs its steps one
after another, in the order given, on a shared pool of :data:`THREADS`
threads, and different lanes run side by side. Nothing waits on a busy
thread: a lane holds a thread only while it has steps queued.

At most :data:`IN_FLIGHT` steps wait or run at a time: submitting more
blocks the caller until one finishes, which bounds the memory a streamed
write holds beyond its open files.

Imports from tables/: nothing.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

#: Threads encoding at once (the machine's cores, at most 4).
THREADS = max(1, min(4, os.cpu_count() or 1))
#: Steps queued or running at once, over every lane of a write.
IN_FLIGHT = 2 * THREADS


class Lanes:
    """The pool one write's lanes share; :meth:`close` waits for every step."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._room = threading.BoundedSemaphore(IN_FLIGHT)
        self._lanes: list[Lane] = []

    def lane(self) -> Lane:
        """A new lane: steps run in the order they are submitted."""
        lane = Lane(self)
        self._lanes.append(lane)
        return lane

    def _start(self, work: Callable[[], None]) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(THREADS, thread_name_prefix="trinity-encode")
        self._pool.submit(work)

    def close(self) -> None:
        """Wait until every lane is idle, then stop the threads (errors are the lanes')."""
        for lane in self._lanes:
            lane.idle.wait()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


class Lane:
    """Steps that run in order on the shared pool (see the module docstring)."""

    def __init__(self, lanes: Lanes) -> None:
        self._lanes = lanes
        self._lock = threading.Lock()
        self._steps: deque[Callable[[], Any]] = deque()
        self._running = False
        self.idle = threading.Event()
        self.idle.set()
        self.error: BaseException | None = None
        #: What the last step returned.
        self.result: Any = None

    def submit(self, step: Callable[[], Any]) -> None:
        """Queue ``step`` after this lane's earlier ones (blocks while too many are queued)."""
        self._lanes._room.acquire()
        with self._lock:
            self._steps.append(step)
            if self._running:
                return
            self._running = True
            self.idle.clear()
        self._lanes._start(self._drain)

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._steps:
                    self._running = False
                    self.idle.set()
                    return
                step = self._steps.popleft()
            try:
                if self.error is None:  # after a failure, the rest is skipped
                    self.result = step()
            except BaseException as exc:  # noqa: BLE001 - re-raised by wait(), in the writer's thread
                self.error = exc
            finally:
                self._lanes._room.release()

    def wait(self) -> Any:
        """Wait for this lane's steps; the last one's result, or its first error raised."""
        self.idle.wait()
        if self.error is not None:
            raise self.error
        return self.result
