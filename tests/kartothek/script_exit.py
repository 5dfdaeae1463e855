"""How the scripts run in Kartothek 5.3's virtualenv end (Python 3.9, found beside them)."""

import os
import sys


def exit_without_finalizing():
    """Exit 0 once the work is done and printed, skipping interpreter finalization.

    pyarrow 6.0.1 (Kartothek 5.3's) can abort while its thread pool winds down
    at exit ("terminate called without an active exception", exit -6), after
    every line was printed: seen in CI under load. Nothing is left to finalize.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
