CREATE NAMESPACE sales
CREATE SCHEMA sales
CREATE NAMESPACE IF NOT EXISTS sales
CREATE SCHEMA IF NOT EXISTS sales COMMENT 'Sales data'
CREATE NAMESPACE sales COMMENT 'Sales data' WITH (owner = 'ana', retention_days = '30')
CREATE NAMESPACE sales WITH ('write.format' = 'parquet')
CREATE NAMESPACE sales WITH (write.format.name = 'parquet')
CREATE NAMESPACE "Sales" COMMENT ? WITH (owner = ?)
DROP NAMESPACE sales
DROP SCHEMA sales
DROP NAMESPACE IF EXISTS sales
DROP NAMESPACE sales RESTRICT
DROP SCHEMA IF EXISTS sales CASCADE
ALTER NAMESPACE sales SET PROPERTIES (owner = 'bo')
ALTER SCHEMA sales SET PROPERTIES (owner = 'bo', 'team.name' = ?)
ALTER NAMESPACE sales UNSET PROPERTIES (owner)
ALTER SCHEMA sales UNSET PROPERTIES (owner, 'team.name')
SHOW NAMESPACES
SHOW SCHEMAS
SHOW NAMESPACES LIKE 'sal%'
SHOW SCHEMAS LIKE ?
DESCRIBE NAMESPACE sales
DESCRIBE SCHEMA sales
CREATE TABLE orders (id INT8)
CREATE TABLE sales.orders (id INT8 NOT NULL, amount DECIMAL(10, 2), placed TIMESTAMPTZ(6))
CREATE TABLE IF NOT EXISTS sales.orders (id INT8 NOT NULL COMMENT 'order number', note VARCHAR COMMENT ?)
CREATE TABLE sales.orders (id INT8, day DATE, PRIMARY KEY (id)) PARTITIONED BY (day)
CREATE TABLE sales.orders (id INT8, day DATE, PRIMARY KEY (id, day)) PARTITIONED BY (day) COMMENT 'orders' WITH (owner = 'ana')
CREATE TABLE web.events (id INT8, ts TIMESTAMPTZ(6), user_name VARCHAR, country VARCHAR) PARTITIONED BY (country, day(ts), bucket(16, id))
CREATE TABLE t (a INT8, s VARCHAR, d DATE) PARTITIONED BY (truncate(4, s), year(d), month(d), "a")
CREATE TABLE sales.orders (id INT8) COMMENT ? WITH ('format.version' = '1', owner = ?)
CREATE TABLE sales.orders_copy CLONE sales.orders
CREATE TABLE IF NOT EXISTS audit.orders CLONE sales.orders FOR SYSTEM_VERSION AS OF 12
CREATE TABLE sales.orders_eod CLONE sales.orders FOR SYSTEM_VERSION AS OF 'eod'
CREATE TABLE orders_then CLONE orders FOR SYSTEM_TIME AS OF ?
CREATE TABLE "Sales"."Orders" ("Id" INT8, "order" INT4)
CREATE TABLE t (a BOOLEAN)
CREATE TABLE t (a INT2)
CREATE TABLE t (a INT4)
CREATE TABLE t (a INT8)
CREATE TABLE t (a DECIMAL(38, 0))
CREATE TABLE t (a DECIMAL(1, 0))
CREATE TABLE t (a DECIMAL(38, 38))
CREATE TABLE t (a FLOAT4)
CREATE TABLE t (a FLOAT8)
CREATE TABLE t (a CHAR(1))
CREATE TABLE t (a CHAR(10))
CREATE TABLE t (a VARCHAR(255))
CREATE TABLE t (a VARCHAR)
CREATE TABLE t (a VARCHAR(4294967295))
CREATE TABLE t (a DATE)
CREATE TABLE t (a TIME(6))
CREATE TABLE t (a TIME(0))
CREATE TABLE t (a TIMETZ(6))
CREATE TABLE t (a TIMETZ(9))
CREATE TABLE t (a TIMESTAMP(6))
CREATE TABLE t (a TIMESTAMP(3))
CREATE TABLE t (a TIMESTAMPTZ(6))
CREATE TABLE t (a TIMESTAMPTZ(9))
CREATE TABLE t (a FIXED(16))
CREATE TABLE t (a BINARY(64))
CREATE TABLE t (a BINARY)
CREATE TABLE t (a STRUCT<x: INT4, y: VARCHAR(10)>)
CREATE TABLE t (a STRUCT<"Upper": INT4, "with space": DATE>)
CREATE TABLE t (a STRUCT<"inner": STRUCT<x: FLOAT8>, tags: LIST<VARCHAR>>)
CREATE TABLE t (a MAP<VARCHAR(10), INT8>)
CREATE TABLE t (a MAP<INT4, STRUCT<x: BOOLEAN>>)
CREATE TABLE t (a LIST<INT4>)
CREATE TABLE t (a LIST<LIST<DECIMAL(10, 2)>>)
CREATE TABLE t (a MAP<VARCHAR, LIST<MAP<INT8, BINARY(8)>>>)
CREATE TABLE t (id INT8 NOT NULL, payload STRUCT<k: VARCHAR, v: LIST<FLOAT4>> COMMENT 'nested')
CREATE TABLE sales.big_orders AS SELECT * FROM sales.orders WHERE amount > 100
CREATE TABLE IF NOT EXISTS sales.daily PARTITIONED BY (day) COMMENT 'daily totals' WITH (owner = 'ana') AS SELECT day, SUM(amount) AS total FROM sales.orders GROUP BY day
CREATE TABLE orders_v3 COMMENT ? WITH (owner = ?) AS SELECT * FROM orders FOR SYSTEM_VERSION AS OF ? WHERE id > ?
CREATE TABLE "Sales"."Recent" AS WITH r AS (SELECT * FROM orders FOR SYSTEM_TIME AS OF TIMESTAMP '2026-01-01 00:00:00') SELECT id FROM r
CREATE TABLE codes AS VALUES (1, 'a'), (2, 'b')
CREATE TABLE ids AS SELECT id FROM a UNION ALL SELECT id FROM b
CREATE TABLE t AS (SELECT 1 AS x)
DROP TABLE orders
DROP TABLE sales.orders
DROP TABLE IF EXISTS sales.orders
TRUNCATE TABLE orders
TRUNCATE TABLE sales.orders
TRUNCATE TABLE "Sales"."Orders"
CREATE INDEX orders_customer ON sales.orders (customer)
CREATE INDEX IF NOT EXISTS orders_day ON orders (day)
CREATE INDEX "Idx" ON "Sales"."Orders" ("Customer")
DROP INDEX orders_customer ON sales.orders
DROP INDEX IF EXISTS orders_day ON orders
ALTER TABLE sales.orders ADD COLUMN note VARCHAR
ALTER TABLE sales.orders ADD COLUMN qty INT4 NOT NULL COMMENT 'quantity'
ALTER TABLE orders ADD COLUMN tags LIST<VARCHAR(20)>
ALTER TABLE orders ADD COLUMN note VARCHAR COMMENT ?
ALTER TABLE sales.orders DROP COLUMN note
ALTER TABLE sales.orders RENAME COLUMN qty TO quantity
ALTER TABLE sales.orders RENAME COLUMN "Qty" TO "Quantity"
ALTER TABLE sales.orders RENAME TO orders_2024
ALTER TABLE sales.orders RENAME TO archive.orders_2024
ALTER TABLE sales.orders SET PROPERTIES (owner = 'ana')
ALTER TABLE sales.orders SET PROPERTIES (owner = ?, 'retention.days' = '7')
ALTER TABLE sales.orders UNSET PROPERTIES (owner, 'retention.days')
ALTER TABLE sales.orders ALTER COLUMN qty TYPE INT8
ALTER TABLE sales.orders ALTER COLUMN amount TYPE DECIMAL(18, 2)
ALTER TABLE web.events SET PARTITIONED BY (month(ts), bucket(8, id))
ALTER TABLE web.events SET PARTITIONED BY ()
SHOW TABLES
SHOW TABLES IN sales
SHOW TABLES LIKE 'ord%'
SHOW TABLES IN sales LIKE ?
SHOW TABLES IN "Sales"
DESCRIBE TABLE orders
DESCRIBE TABLE sales.orders
SHOW CREATE TABLE orders
SHOW CREATE TABLE sales.orders
BEGIN
BEGIN ISOLATION LEVEL SERIALIZABLE
BEGIN ISOLATION LEVEL SNAPSHOT
COMMIT
ROLLBACK
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE
SET TRANSACTION ISOLATION LEVEL SNAPSHOT
SET COMMIT MESSAGE 'load of 2026-12-01'
SET COMMIT MESSAGE ?
SAVE TRANSACTION
LOAD TRANSACTION '0f8fad5b-d9cb-469f-a165-70867728950e'
LOAD TRANSACTION ?
USE sales
USE "Sales"
CALL system.rollback_to_version(3)
CALL system.rollback_to_version(version => 3)
CALL system.rollback_to_version(?)
CALL system.export_snapshot('eod', 12)
CALL system.export_snapshot(name => 'eod', version => 12, mode => 'minimal', target => 's3://bucket/exports/eod')
CALL system.export_snapshot(name => ?, mode => 'full')
CALL system.expire_versions(older_than => TIMESTAMP '2026-01-01 00:00:00', retain_last => 5, dry_run => TRUE)
CALL system.expire_versions(older_than => ?, retain_last => ?)
CALL system.expire_versions(retain_last => 10, dry_run => FALSE)
CALL system.compact()
CALL system.rewrite_data_files('sales.orders', 134217728, 'day >= DATE ''2026-01-01''')
SELECT "partition", COUNT(*) AS files FROM system.data_files WHERE table_name = 'orders' GROUP BY "partition" HAVING COUNT(*) > 10
SELECT * FROM system.table_changes('sales.orders', 'eod', 12)
SELECT change_type, COUNT(*) AS n FROM system.table_changes('sales.orders', ?, ?) GROUP BY change_type
SELECT * FROM system.table_changes('sales.orders', 12, 'audit') AS c WHERE c.id = 7 ORDER BY c.version
SELECT * FROM system.table_changes('orders', TIMESTAMP '2026-01-01 00:00:00', ?)
CALL system.rewrite_data_files(table => 'sales.orders', where => 'region = ''eu''', target_file_size_bytes => 1048576)
CALL compact()
CALL system.collect_garbage(grace_period_millis => 3600000, dry_run => TRUE)
CALL system.some_procedure(1, -2, 3.5, 'text', NULL, DATE '2026-01-01', x => 1e3)
SELECT 1
SELECT * FROM orders
SELECT id, amount FROM sales.orders WHERE amount > 100 ORDER BY id LIMIT 10
SELECT * FROM orders WHERE id = ? AND status IN (?, ?)
SELECT COUNT(*) AS n, SUM(amount) FROM sales.orders GROUP BY customer HAVING COUNT(*) > 1
SELECT o.id, c.name FROM sales.orders AS o JOIN sales.customers AS c ON o.customer = c.id
SELECT * FROM orders LEFT JOIN returns USING (id)
WITH recent AS (SELECT * FROM orders WHERE day > DATE '2026-01-01') SELECT COUNT(*) FROM recent
WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r
VALUES (1, 'a'), (2, 'b')
SELECT 1 UNION ALL SELECT 2
SELECT id FROM a UNION SELECT id FROM b
SELECT id FROM a INTERSECT SELECT id FROM b
SELECT id FROM a EXCEPT SELECT id FROM b
SELECT * FROM (SELECT id FROM orders) AS s WHERE s.id > 1
SELECT CAST(? AS INT), ? + 1
SELECT * EXCLUDE (note) FROM orders
SELECT {'a': 1, 'b': [1, 2]} AS s
SELECT TIMESTAMP '2026-01-01 12:00:00', DATE '2026-01-01'
SELECT ROW_NUMBER() OVER (PARTITION BY customer ORDER BY day DESC) AS rn FROM orders
SELECT * FROM orders FOR SYSTEM_VERSION AS OF 3
SELECT * FROM orders FOR SYSTEM_VERSION AS OF 'eod'
SELECT * FROM orders FOR SYSTEM_VERSION AS OF ?
SELECT * FROM orders FOR VERSION AS OF 3
SELECT * FROM orders FOR VERSION AS OF 'eod'
SELECT * FROM orders FOR SYSTEM_TIME AS OF TIMESTAMP '2026-01-01 00:00:00'
SELECT * FROM orders FOR SYSTEM_TIME AS OF '2026-01-01T00:00:00Z'
SELECT * FROM orders FOR SYSTEM_TIME AS OF ?
SELECT * FROM orders FOR TIMESTAMP AS OF TIMESTAMP '2026-01-01 00:00:00'
SELECT * FROM orders FOR TIMESTAMP AS OF TIMESTAMPTZ '2026-01-01 00:00:00+02:00'
SELECT * FROM orders FOR TIMESTAMP AS OF DATE '2026-01-01'
SELECT * FROM sales.orders FOR SYSTEM_VERSION AS OF 3 AS o WHERE o.id = ?
SELECT * FROM orders FOR SYSTEM_VERSION AS OF 3 AS old JOIN orders AS cur ON old.id = cur.id
SELECT * FROM a FOR SYSTEM_VERSION AS OF 1 JOIN b FOR SYSTEM_TIME AS OF ? ON a.id = b.id
SELECT * FROM orders WHERE id IN (SELECT id FROM orders FOR SYSTEM_VERSION AS OF ?)
WITH old AS (SELECT * FROM orders FOR VERSION AS OF 'eod') SELECT * FROM old
SELECT * FROM (SELECT * FROM orders FOR SYSTEM_VERSION AS OF 2) AS s WHERE s.id > ?
SELECT COUNT(*) FROM system.versions
EXPLAIN SELECT * FROM orders
EXPLAIN ANALYZE SELECT COUNT(*) FROM orders WHERE id > ?
SUMMARIZE orders
SUMMARIZE sales.orders FOR SYSTEM_VERSION AS OF 3
SUMMARIZE SELECT amount FROM orders WHERE day > ?
DESCRIBE SELECT id, amount * 2 AS doubled FROM orders
COPY sales.orders FROM 'orders.csv'
COPY orders FROM '/data/orders.tsv' (FORMAT csv, HEADER FALSE, DELIMITER '|')
COPY (SELECT id, amount FROM orders WHERE amount > ?) TO ? (FORMAT parquet)
COPY orders TO 'orders.jsonl' (OVERWRITE)
COPY orders TO 'o.csv' (FORMAT json, HEADER TRUE, DELIMITER ?, OVERWRITE FALSE)
INSERT INTO orders VALUES (1, 'a')
INSERT INTO sales.orders (id, note) VALUES (?, ?)
INSERT INTO orders SELECT * FROM staging
INSERT INTO orders SELECT * FROM orders FOR SYSTEM_VERSION AS OF 3 WHERE id > ?
UPDATE orders SET note = ? WHERE id = ?
UPDATE sales.orders SET amount = amount * 2
DELETE FROM orders WHERE id = ?
DELETE FROM sales.orders
INSERT INTO t (a, b) VALUES (?, ?), (?, ?)
INSERT INTO t SELECT * FROM u FOR SYSTEM_VERSION AS OF ? WHERE x > ?
DELETE FROM t WHERE a IN (SELECT a FROM u) AND b = ?
UPDATE t SET a = ?, b = b || ? WHERE c = ?
UPDATE t AS x SET a = 1 WHERE x.b = 2
DELETE FROM t AS x WHERE x.a = 1
WITH recent AS (SELECT * FROM staging WHERE day > ?) INSERT INTO orders SELECT * FROM recent
MERGE INTO sales.orders AS o USING staging.orders AS s ON o.id = s.id WHEN MATCHED AND s.deleted THEN DELETE WHEN MATCHED THEN UPDATE SET amount = s.amount WHEN NOT MATCHED THEN INSERT (id, amount) VALUES (s.id, s.amount)
MERGE INTO t USING (VALUES (?, ?)) AS s(id, v) ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *
MERGE INTO t USING (SELECT id FROM u FOR SYSTEM_VERSION AS OF 3) AS s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE
MERGE INTO t USING u USING (id) WHEN MATCHED THEN DO NOTHING WHEN NOT MATCHED THEN INSERT *
UPDATE t SET a = u.a FROM u WHERE t.id = u.id AND u.b > ?
CREATE VIEW v AS SELECT a, b FROM t WHERE a > 1
CREATE OR REPLACE VIEW sales.recent (id, day) COMMENT 'last week' AS SELECT id, day FROM sales.orders WHERE day > DATE '2024-01-01'
CREATE VIEW IF NOT EXISTS v AS SELECT * FROM t FOR SYSTEM_VERSION AS OF 3
DROP VIEW IF EXISTS sales.recent
DROP VIEW v
SHOW VIEWS
SHOW VIEWS IN sales
CREATE TABLE web.events_copy PARTITIONED BY (day(ts), bucket(16, id)) AS SELECT * FROM web.events
CREATE BRANCH dev
CREATE BRANCH IF NOT EXISTS dev FROM BRANCH main
CREATE BRANCH audit FROM TAG eod
CREATE BRANCH old FROM VERSION 12
DROP BRANCH dev
DROP BRANCH IF EXISTS dev
USE BRANCH dev
MERGE BRANCH dev
MERGE BRANCH dev INTO staging
CREATE TAG eod
CREATE TAG IF NOT EXISTS eod FROM BRANCH dev
CREATE TAG v12 FROM VERSION 12
DROP TAG eod
DROP TAG IF EXISTS eod
SHOW BRANCHES
SHOW TAGS
