"""SQL front end: the trinity language, from text to the statement model.

:mod:`~trinity_dbapi.sql.statements` is the door (``parse``, ``to_statement``);
:mod:`trinity_dbapi.sql.engine` runs what it returns and is not part of the
language: nothing in this folder's modules imports it.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``compat`` (what differs between sqlglot releases), ``expressions`` (the
   dialect's own nodes), ``model`` (the statement dataclasses), ``nesting``,
   ``statement_cache``, ``table_functions``, ``literals``
2. ``identifiers``, ``binding`` (parameters and literal values),
   ``parser_base``, ``types_sql`` (the type tables, type nodes to
   ``DataType`` and back)
3. ``diagnostics``, ``parser_ddl``, ``generator``
4. ``parser``
5. ``dialect`` (the ``Trinity`` dialect, and a type's text both ways)
6. ``queries`` (queries and DML in the model: their tables, time travel and
   placeholders)
7. ``statements`` (the door: ``parse`` and ``to_statement``)
"""
