"""``python -m trinity_dbapi.demo``: the same as ``trinity-demo``.

Imports from demo/: nothing.
"""

import sys

from trinity_dbapi.demo import main

sys.exit(main())
