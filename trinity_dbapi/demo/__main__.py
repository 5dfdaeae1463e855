"""``python -m trinity_dbapi.demo``: the same as ``trinity-demo``."""

import sys

from trinity_dbapi.demo import main

sys.exit(main())
