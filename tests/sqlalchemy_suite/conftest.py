"""SQLAlchemy's dialect compliance suite, wired as SQLAlchemy's README.dialects says.

Not collected by the main test run (its pytest plugin would take over the
session); ``tests/sqlalchemy/test_compliance.py`` runs it in a subprocess
with ``TRINITY_SQLA_SUITE=1``. To run it by hand::

    TRINITY_SQLA_SUITE=1 python -m pytest tests/sqlalchemy_suite --dburi trinity:////tmp/lake
"""

import pytest
from sqlalchemy.dialects import registry

registry.register("trinity", "trinity_dbapi.sqlalchemy.driver", "TrinityDialect_trinity_dbapi")

pytest.register_assert_rewrite("sqlalchemy.testing.assertions")

from sqlalchemy.testing.plugin.pytestplugin import *
