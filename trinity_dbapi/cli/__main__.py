"""``python -m trinity_dbapi.cli``: the ``trinity`` command.

Imports from cli/: command.
"""

import sys

from trinity_dbapi.cli.command import main

sys.exit(main())
