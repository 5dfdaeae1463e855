"""What the trinity dialect supports, for SQLAlchemy's dialect compliance suite.

Wired as SQLAlchemy's ``README.dialects`` describes (``[sqla_testing]`` in
``setup.cfg`` names this class). Every requirement closed here carries the
reason on its line; requirements opened here are features SQLAlchemy's
defaults assume absent but the lakehouse has. Only imported by the suite.

Imports from sqlalchemy/: nothing.
"""

from __future__ import annotations

from sqlalchemy.testing import exclusions
from sqlalchemy.testing.requirements import SuiteRequirements

closed = exclusions.closed
opened = exclusions.open


class Requirements(SuiteRequirements):
    """The compliance suite's view of the trinity dialect."""

    # -- closed: the format does not have it ----------------------------------------

    foreign_keys = property(lambda self: closed())  # TrinityLake records no foreign keys
    on_update_cascade = property(lambda self: closed())  # no foreign keys, no cascades
    self_referential_foreign_keys = property(lambda self: closed())  # no foreign keys
    recursive_fk_cascade = property(lambda self: closed())  # no foreign keys
    foreign_key_constraint_reflection = property(lambda self: closed())  # none recorded
    named_constraints = property(lambda self: closed())  # constraints are unnamed in the grammar
    implicitly_named_constraints = property(lambda self: closed())  # constraints are unnamed
    unique_constraint_reflection = property(lambda self: closed())  # unique keys not created
    duplicate_key_raises_integrity_error = property(lambda self: closed())  # keys informational
    autoincrement_insert = property(lambda self: closed())  # no identity or auto-increment columns
    autoincrement_without_sequence = property(lambda self: closed())  # no auto-increment
    implements_get_lastrowid = property(lambda self: closed())  # no row ids: lastrowid is None
    temp_table_reflection = property(lambda self: closed())  # no temporary tables
    temporary_tables = property(lambda self: closed())  # no temporary tables
    # A view is a catalog object of a namespace, committed like a table; the
    # format has no session-scoped objects, so no temporary views either.
    temporary_views = property(lambda self: closed())
    materialized_views = property(lambda self: closed())  # a view stores its query, no rows
    index_reflection = property(lambda self: closed())  # fixtures index several columns at once
    indexes_with_ascdesc = property(lambda self: closed())  # an index covers one plain column
    reflect_indexes_with_ascdesc = property(lambda self: closed())  # no ordered indices
    json_index_supplementary_unicode_element = property(lambda self: closed())  # no JSON type
    # A DATE column takes a datetime only at midnight: the write conversion rule
    # (docs/datasets.md) refuses a value whose time of day would be lost.
    date_coerces_from_datetime = property(lambda self: closed())
    names_with_spaces = property(lambda self: closed())  # format: names may not contain spaces

    # -- opened: the lakehouse has it ------------------------------------------------

    schemas = property(lambda self: opened())  # namespaces are schemas
    foreign_key_ddl = property(lambda self: opened())  # accepted in DDL, not recorded
    table_ddl_if_exists = property(lambda self: opened())  # CREATE/DROP TABLE IF [NOT] EXISTS
    comment_reflection = property(lambda self: opened())  # table and column comments
    comment_reflection_full_unicode = property(lambda self: opened())  # comments are UTF-8
    table_value_constructor = property(lambda self: opened())  # DuckDB VALUES lists
    boolean_col_expressions = property(lambda self: opened())  # native BOOLEAN
    intersect = property(lambda self: opened())  # DuckDB set operations
    except_ = property(lambda self: opened())  # DuckDB set operations
    window_functions = property(lambda self: opened())  # DuckDB window functions
    ctes = property(lambda self: opened())  # WITH in queries
    tuple_in = property(lambda self: opened())  # (a, b) IN ((1, 2), ...)
    datetime_timezone = property(lambda self: opened())  # TIMESTAMPTZ
    datetime_literals = property(lambda self: opened())  # TIMESTAMP '...' literals
    regexp_match = property(lambda self: opened())  # regexp_matches
    regexp_replace = property(lambda self: opened())  # regexp_replace
    array_type = property(lambda self: opened())  # LIST<T>
    nullsordering = property(lambda self: opened())  # NULLS FIRST / LAST
    unicode_ddl = property(lambda self: opened())  # quoted names are UTF-8
    isolation_level = property(lambda self: opened())  # SERIALIZABLE, SNAPSHOT, AUTOCOMMIT
    autocommit = property(lambda self: opened())  # AUTOCOMMIT isolation level
    precision_numerics_many_significant_digits = property(lambda self: opened())  # DECIMAL(38)
    reflect_table_options = property(lambda self: opened())  # partitioning and properties
    views = property(lambda self: opened())  # CREATE VIEW, DROP VIEW (schema ID 3)
    view_column_reflection = property(lambda self: opened())  # columns bound at CREATE VIEW
    view_reflection = property(lambda self: opened())  # get_view_definition: the stored query
    create_or_replace_view = property(lambda self: opened())  # CREATE OR REPLACE VIEW
    create_table_as = property(lambda self: opened())  # CREATE TABLE ... AS SELECT

    def get_isolation_levels(self, config: object) -> dict[str, object]:
        return {"default": "SERIALIZABLE", "supported": ["AUTOCOMMIT", "SERIALIZABLE", "SNAPSHOT"]}
