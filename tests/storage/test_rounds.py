"""The process-wide pools: one per process, made again in a forked child."""

from __future__ import annotations

import os

import pytest

from trinity_dbapi.storage.rounds import ForkSafePool

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def test_a_pool_is_made_once_per_process() -> None:
    pool = ForkSafePool(2, "trinity-probe")
    first = pool.get()
    assert pool.get() is first
    assert first.submit(lambda: 41 + 1).result(timeout=5) == 42


def test_a_forked_child_gets_its_own_pool_and_the_parent_keeps_its() -> None:
    pool = ForkSafePool(2, "trinity-probe")
    parent = pool.get()
    assert parent.submit(lambda: 1).result(timeout=5) == 1  # its threads are running
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's threads are not here
        try:
            child = pool.get()
            fresh = child is not parent
            works = child.submit(lambda: 41 + 1).result(timeout=5) == 42
            os.write(write_end, b"1" if fresh and works else b"0")
        finally:
            os._exit(0)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    assert os.read(read_end, 1) == b"1"
    assert os.waitstatus_to_exitcode(status) == 0
    assert pool.get() is parent
