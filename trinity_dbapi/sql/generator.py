"""The trinity generator: canonical SQL text of the dialect's syntax trees.

Queries print as sqlglot's DuckDB generator prints them, except that every
placeholder prints as ``?`` and a typed literal (``TIMESTAMP '...'``) prints
as written. The dialect's own statements print in one canonical form:
upper-case keywords, types by their TrinityLake names (``INT4``,
``DECIMAL(10, 2)``, ``LIST<VARCHAR>``), noise words dropped (``BEGIN WORK`` ->
``BEGIN``) and ``SCHEMA`` / ``NAMESPACE`` kept as written. Each node of
:mod:`trinity_dbapi.sql.expressions` has its ``<key>_sql`` method, wired in
``TRANSFORMS``.

Imports from sql/: compat, expressions, table_functions, types_sql.
"""

from __future__ import annotations

import re
from typing import ClassVar

from sqlglot import exp

from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql import types_sql
from trinity_dbapi.sql.compat import DuckDBGenerator, meta_get
from trinity_dbapi.sql.table_functions import lakehouse_function

#: A name that prints without quotes before ``=>`` in CALL.
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class TrinityGenerator(DuckDBGenerator):
    """The trinity dialect's generator."""

    # -- queries -------------------------------------------------------------------------

    def anonymous_sql(self, expression: exp.Anonymous) -> str:
        # The lakehouse's table functions print as documented, lower case like
        # the catalog tables beside them (system.table_changes, system.tables).
        if lakehouse_function(expression) is not None:
            name = expression.name.lower()
            return self.func(name, *expression.expressions, normalize=False)
        return super().anonymous_sql(expression)

    def placeholder_sql(self, expression: exp.Placeholder) -> str:
        return "?"

    def cast_sql(self, expression: exp.Cast, safe_prefix: str | None = None) -> str:
        if meta_get(expression, texp.TYPED_LITERAL):
            return f"{self.sql(expression, 'to')} {self.sql(expression, 'this')}"
        return super().cast_sql(expression, safe_prefix)

    # -- shared pieces ----------------------------------------------------------------------

    def _clause(self, expression: exp.Expression, key: str, keyword: str) -> str:
        value = self.sql(expression, key)
        return f" {keyword} {value}" if value else ""

    def _exists(self, expression: exp.Expression, text: str = " IF EXISTS") -> str:
        return text if expression.args.get("exists") else ""

    def _wrapped(self, expression: exp.Expression, key: str, keyword: str) -> str:
        items = expression.args.get(key)
        if not items:
            return ""
        return f" {keyword} ({', '.join(self.sql(item) for item in items)})"

    def propertyitem_sql(self, expression: texp.PropertyItem) -> str:
        return f"{self.sql(expression, 'this')} = {self.sql(expression, 'value')}"

    def partitiontransform_sql(self, expression: texp.PartitionTransform) -> str:
        width = expression.args.get("width")
        first = "" if width is None else f"{self.sql(width)}, "
        return f"{expression.this}({first}{self.sql(expression, 'expression')})"

    def setpartitioning_sql(self, expression: texp.SetPartitioning) -> str:
        items = ", ".join(self.sql(item) for item in expression.expressions)
        return f"SET PARTITIONED BY ({items})"

    def setproperties_sql(self, expression: texp.SetProperties) -> str:
        return self._wrapped(expression, "expressions", "SET PROPERTIES").strip()

    def unsetproperties_sql(self, expression: texp.UnsetProperties) -> str:
        return self._wrapped(expression, "expressions", "UNSET PROPERTIES").strip()

    # -- namespaces ---------------------------------------------------------------------------

    def createnamespace_sql(self, expression: texp.CreateNamespace) -> str:
        exists = self._exists(expression, " IF NOT EXISTS")
        comment = self._clause(expression, "comment", "COMMENT")
        properties = self._wrapped(expression, "properties", "WITH")
        name = self.sql(expression, "this")
        return f"CREATE {expression.text('kind')}{exists} {name}{comment}{properties}"

    def dropnamespace_sql(self, expression: texp.DropNamespace) -> str:
        mode = expression.args.get("mode")
        mode = f" {mode}" if mode else ""
        name = self.sql(expression, "this")
        return f"DROP {expression.text('kind')}{self._exists(expression)} {name}{mode}"

    def alternamespace_sql(self, expression: texp.AlterNamespace) -> str:
        name = self.sql(expression, "this")
        return f"ALTER {expression.text('kind')} {name} {self.sql(expression, 'action')}"

    def shownamespaces_sql(self, expression: texp.ShowNamespaces) -> str:
        return f"SHOW {expression.text('kind')}{self._clause(expression, 'like', 'LIKE')}"

    def describenamespace_sql(self, expression: texp.DescribeNamespace) -> str:
        return f"DESCRIBE {expression.text('kind')} {self.sql(expression, 'this')}"

    # -- tables ---------------------------------------------------------------------------------

    def column_type_sql(self, node: exp.DataType) -> str:
        """A column type by its canonical TrinityLake name, e.g. ``MAP<VARCHAR(10), INT8>``."""
        kind = types_sql.DTYPE_KINDS.get(node.this)
        if kind is None:
            return self.sql(node)
        name = types_sql.CANONICAL_NAMES[kind]
        if kind == "struct":
            members = ", ".join(
                f"{self.sql(member, 'this')}: {self.column_type_sql(member.args['kind'])}"
                for member in node.expressions
            )
            return f"{name}<{members}>"
        if kind in ("map", "list"):
            return f"{name}<{', '.join(self.column_type_sql(c) for c in node.expressions)}>"
        params = types_sql.type_parameters(node)
        return f"{name}({', '.join(str(p) for p in params)})" if params else name

    def columndefinition_sql(self, expression: texp.ColumnDefinition) -> str:
        not_null = " NOT NULL" if expression.args.get("not_null") else ""
        kind = self.column_type_sql(expression.args["kind"])
        comment = self._clause(expression, "comment", "COMMENT")
        return f"{self.sql(expression, 'this')} {kind}{not_null}{comment}"

    def createtable_sql(self, expression: texp.CreateTable) -> str:
        elements = [self.sql(column) for column in expression.expressions]
        primary_key = self._wrapped(expression, "primary_key", "PRIMARY KEY")
        if primary_key:
            elements.append(primary_key.strip())
        exists = self._exists(expression, " IF NOT EXISTS")
        return (
            f"CREATE TABLE{exists} {self.sql(expression, 'this')} ({', '.join(elements)})"
            f"{self._wrapped(expression, 'partitioned_by', 'PARTITIONED BY')}"
            f"{self._clause(expression, 'comment', 'COMMENT')}"
            f"{self._wrapped(expression, 'properties', 'WITH')}"
        )

    def createtableas_sql(self, expression: texp.CreateTableAs) -> str:
        exists = self._exists(expression, " IF NOT EXISTS")
        return (
            f"CREATE TABLE{exists} {self.sql(expression, 'this')}"
            f"{self._wrapped(expression, 'partitioned_by', 'PARTITIONED BY')}"
            f"{self._clause(expression, 'comment', 'COMMENT')}"
            f"{self._wrapped(expression, 'properties', 'WITH')}"
            f" AS {self.sql(expression, 'expression')}"
        )

    def createtableclone_sql(self, expression: texp.CreateTableClone) -> str:
        exists = self._exists(expression, " IF NOT EXISTS")
        return (
            f"CREATE TABLE{exists} {self.sql(expression, 'this')}"
            f" CLONE {self.sql(expression, 'expression')}"
        )

    def droptable_sql(self, expression: texp.DropTable) -> str:
        return f"DROP TABLE{self._exists(expression)} {self.sql(expression, 'this')}"

    def createview_sql(self, expression: texp.CreateView) -> str:
        replace = " OR REPLACE" if expression.args.get("replace") else ""
        exists = self._exists(expression, " IF NOT EXISTS")
        return (
            f"CREATE{replace} VIEW{exists} {self.sql(expression, 'this')}"
            f"{self._wrapped(expression, 'columns', '')[1:]}"
            f"{self._clause(expression, 'comment', 'COMMENT')}"
            f" AS {self.sql(expression, 'expression')}"
        )

    def dropview_sql(self, expression: texp.DropView) -> str:
        return f"DROP VIEW{self._exists(expression)} {self.sql(expression, 'this')}"

    def showviews_sql(self, expression: texp.ShowViews) -> str:
        namespace = f" IN {self.sql(expression, 'this')}" if expression.this else ""
        return f"SHOW VIEWS{namespace}"

    def truncate_sql(self, expression: texp.Truncate) -> str:
        return f"TRUNCATE TABLE {self.sql(expression, 'this')}"

    def altertable_sql(self, expression: texp.AlterTable) -> str:
        return f"ALTER TABLE {self.sql(expression, 'this')} {self.sql(expression, 'action')}"

    def addcolumn_sql(self, expression: texp.AddColumn) -> str:
        return f"ADD COLUMN {self.sql(expression, 'this')}"

    def dropcolumn_sql(self, expression: texp.DropColumn) -> str:
        return f"DROP COLUMN {self.sql(expression, 'this')}"

    def renamecolumnto_sql(self, expression: texp.RenameColumnTo) -> str:
        return f"RENAME COLUMN {self.sql(expression, 'this')} TO {self.sql(expression, 'to')}"

    def renametable_sql(self, expression: texp.RenameTable) -> str:
        return f"RENAME TO {self.sql(expression, 'this')}"

    def altercolumntype_sql(self, expression: texp.AlterColumnType) -> str:
        kind = self.column_type_sql(expression.args["kind"])
        return f"ALTER COLUMN {self.sql(expression, 'this')} TYPE {kind}"

    def showtables_sql(self, expression: texp.ShowTables) -> str:
        namespace = self._clause(expression, "this", "IN")
        return f"SHOW TABLES{namespace}{self._clause(expression, 'like', 'LIKE')}"

    def describetable_sql(self, expression: texp.DescribeTable) -> str:
        return f"DESCRIBE TABLE {self.sql(expression, 'this')}"

    def showcreatetable_sql(self, expression: texp.ShowCreateTable) -> str:
        return f"SHOW CREATE TABLE {self.sql(expression, 'this')}"

    # -- secondary indices ----------------------------------------------------------------------

    def createindex_sql(self, expression: texp.CreateIndex) -> str:
        exists = self._exists(expression, " IF NOT EXISTS")
        name, table = self.sql(expression, "this"), self.sql(expression, "table")
        return f"CREATE INDEX{exists} {name} ON {table} ({self.sql(expression, 'column')})"

    def dropindex_sql(self, expression: texp.DropIndex) -> str:
        name, table = self.sql(expression, "this"), self.sql(expression, "table")
        return f"DROP INDEX{self._exists(expression)} {name} ON {table}"

    # -- sessions, transactions, procedures -------------------------------------------------

    def begin_sql(self, expression: texp.Begin) -> str:
        isolation = expression.args.get("isolation")
        return f"BEGIN ISOLATION LEVEL {isolation}" if isolation else "BEGIN"

    def settransaction_sql(self, expression: texp.SetTransaction) -> str:
        return f"SET TRANSACTION ISOLATION LEVEL {expression.args['isolation']}"

    def savetransaction_sql(self, expression: texp.SaveTransaction) -> str:
        return "SAVE TRANSACTION"

    def loadtransaction_sql(self, expression: texp.LoadTransaction) -> str:
        return f"LOAD TRANSACTION {self.sql(expression, 'this')}"

    def setcommitmessage_sql(self, expression: texp.SetCommitMessage) -> str:
        return f"SET COMMIT MESSAGE {self.sql(expression, 'this')}"

    def refstatement_sql(self, expression: texp.RefStatement) -> str:
        action = expression.args["action"]
        verb = action.partition(" ")[0]
        exists = expression.args.get("exists")
        words = [action]
        if exists:
            words.append("IF NOT EXISTS" if verb == "CREATE" else "IF EXISTS")
        if expression.this is not None:
            words.append(self.sql(expression, "this"))
        if expression.args.get("source_kind"):
            words += ["FROM", expression.args["source_kind"], self.sql(expression, "source")]
        if expression.args.get("target") is not None:
            words += ["INTO", self.sql(expression, "target")]
        return " ".join(words)

    def usenamespace_sql(self, expression: texp.UseNamespace) -> str:
        return f"USE {self.sql(expression, 'this')}"

    def call_sql(self, expression: texp.Call) -> str:
        args = ", ".join(self._call_argument(arg) for arg in expression.expressions)
        return f"CALL {self.sql(expression, 'this')}({args})"

    def _call_argument(self, arg: exp.Expression) -> str:
        name = arg.this if isinstance(arg, exp.Kwarg) else None
        # The parser takes any bare word before =>, so a reserved word such as
        # Iceberg's ``where =>`` needs no quotes; a bare name is lower-cased, so
        # a quoted lower-case one means the same.
        if (
            isinstance(name, exp.Identifier)
            and _BARE.fullmatch(name.name)
            and (not name.quoted or name.name == name.name.lower())
        ):
            return f"{name.name} => {self.sql(arg, 'expression')}"
        return self.sql(arg)

    def explain_sql(self, expression: texp.Explain) -> str:
        analyze = " ANALYZE" if expression.args.get("analyze") else ""
        return f"EXPLAIN{analyze} {self.sql(expression, 'this')}"

    def copyoption_sql(self, expression: texp.CopyOption) -> str:
        value = expression.args.get("value")
        return f"{expression.this} {self.sql(value)}" if value is not None else expression.this

    def _copy_options(self, expression: exp.Expression) -> str:
        options = expression.args.get("options")
        return f" ({', '.join(self.sql(option) for option in options)})" if options else ""

    def copyfrom_sql(self, expression: texp.CopyFrom) -> str:
        target = f"{self.sql(expression, 'this')} FROM {self.sql(expression, 'file')}"
        return f"COPY {target}{self._copy_options(expression)}"

    def copyto_sql(self, expression: texp.CopyTo) -> str:
        query = expression.this
        # COPY t TO holds SELECT * FROM t: its one table prints as written.
        table = query.find(exp.Table) if expression.args.get("table") else None
        source = self.sql(table) if table is not None else f"({self.sql(query)})"
        return f"COPY {source} TO {self.sql(expression, 'file')}{self._copy_options(expression)}"

    def summarizequery_sql(self, expression: texp.SummarizeQuery) -> str:
        query = expression.this
        table = query.find(exp.Table) if expression.args.get("table") else None
        if table is not None:  # SUMMARIZE t holds SELECT * FROM t
            return f"SUMMARIZE {self.sql(table)}"
        return f"SUMMARIZE {self.sql(query)}"

    def describequery_sql(self, expression: texp.DescribeQuery) -> str:
        return f"DESCRIBE {self.sql(expression, 'this')}"

    TRANSFORMS: ClassVar[dict] = {
        **DuckDBGenerator.TRANSFORMS,
        texp.PropertyItem: propertyitem_sql,
        texp.PartitionTransform: partitiontransform_sql,
        texp.SetPartitioning: setpartitioning_sql,
        texp.SetProperties: setproperties_sql,
        texp.UnsetProperties: unsetproperties_sql,
        texp.CreateNamespace: createnamespace_sql,
        texp.DropNamespace: dropnamespace_sql,
        texp.AlterNamespace: alternamespace_sql,
        texp.ShowNamespaces: shownamespaces_sql,
        texp.DescribeNamespace: describenamespace_sql,
        texp.ColumnDefinition: columndefinition_sql,
        texp.CreateTable: createtable_sql,
        texp.CreateTableAs: createtableas_sql,
        texp.CreateTableClone: createtableclone_sql,
        texp.DropTable: droptable_sql,
        texp.AlterTable: altertable_sql,
        texp.AddColumn: addcolumn_sql,
        texp.DropColumn: dropcolumn_sql,
        texp.RenameColumnTo: renamecolumnto_sql,
        texp.RenameTable: renametable_sql,
        texp.Truncate: truncate_sql,
        texp.CreateIndex: createindex_sql,
        texp.DropIndex: dropindex_sql,
        texp.ShowTables: showtables_sql,
        texp.DescribeTable: describetable_sql,
        texp.ShowCreateTable: showcreatetable_sql,
        texp.Begin: begin_sql,
        texp.SetTransaction: settransaction_sql,
        texp.SetCommitMessage: setcommitmessage_sql,
        texp.SaveTransaction: savetransaction_sql,
        texp.LoadTransaction: loadtransaction_sql,
        texp.UseNamespace: usenamespace_sql,
        texp.RefStatement: refstatement_sql,
        texp.RefChange: refstatement_sql,
        texp.Call: call_sql,
        texp.Explain: explain_sql,
        texp.AlterColumnType: altercolumntype_sql,
        texp.CreateView: createview_sql,
        texp.DropView: dropview_sql,
        texp.ShowViews: showviews_sql,
        texp.CopyOption: copyoption_sql,
        texp.CopyFrom: copyfrom_sql,
        texp.CopyTo: copyto_sql,
        texp.SummarizeQuery: summarizequery_sql,
        texp.DescribeQuery: describequery_sql,
    }
