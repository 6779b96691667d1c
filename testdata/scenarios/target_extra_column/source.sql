-- The target has columns the source lacks, at the end of the table, as a
-- replica may (an audit column, a column added ahead of a migration):
-- MariaDB's replica fills them with their defaults on insert and leaves
-- them alone on update, and a row deleted and inserted again, or
-- replaced, gets the defaults again, inside one commit unit too. Rows
-- exist before the binlog starts (setup.sql); the extra columns, one in
-- a unique key, and their values only on the targets (target.sql).
USE te;
UPDATE t SET v = 10, s = 'A' WHERE id = 1;
DELETE FROM t WHERE id = 2;
INSERT INTO t VALUES (3, 3, 'c');
BEGIN;
DELETE FROM t WHERE id = 1;
INSERT INTO t VALUES (1, 100, 'again');
COMMIT;
DELETE FROM t WHERE id = 5;
INSERT INTO t VALUES (5, 50, 'back');
REPLACE INTO t VALUES (6, 60, 'replaced');
UPDATE t SET id = 4 WHERE id = 3;
INSERT INTO k VALUES (1, 'x'), (1, 'x'), (2, 'y');
UPDATE k SET s = 'z' WHERE a = 2;
DELETE FROM k WHERE a = 1 LIMIT 1;
