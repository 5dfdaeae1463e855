"""SQL front end: the trinity language, from text to the statement model.

:mod:`~trinity_dbapi.sql.statements` is the door (``parse``, ``to_statement``);
:mod:`trinity_dbapi.sql.engine` runs what it returns and is not part of the
language: nothing in this folder's modules imports it.

The folder's floors, bottom to top (a module imports only modules below it):

1. ``compat`` (what differs between sqlglot releases), ``expressions`` (the
   dialect's own nodes), ``model`` (the statement dataclasses), ``nesting``,
   ``statement_cache``, ``table_functions``, ``literals``: no sibling;
2. ``identifiers``: ``expressions``; ``binding`` (parameters and literal
   values) and ``parser_base``: ``expressions``, ``compat``; ``types_sql``
   (the type tables, type nodes to ``DataType`` and back): ``compat``;
3. ``diagnostics``: ``parser_base``; ``parser_ddl``: ``expressions``,
   ``types_sql``, ``parser_base``; ``generator``: ``expressions``,
   ``types_sql``, ``compat``;
4. ``parser``: ``expressions``, ``compat``, ``parser_ddl``;
5. ``dialect`` (the ``Trinity`` dialect, and a type's text both ways):
   ``types_sql``, ``generator``, ``parser``;
6. ``queries`` (queries and DML in the model: their tables, time travel and
   placeholders): ``expressions``, ``compat``, ``model``, ``binding``,
   ``table_functions``, ``types_sql``, ``parser``;
7. ``statements``: any module above.
"""
