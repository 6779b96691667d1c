-- The target has columns the source lacks, at the end of the table, as a
-- replica may (an audit column, a column added ahead of a migration):
-- MariaDB's replica fills them with their defaults on insert and leaves
-- them alone on update. The table exists before the binlog starts
-- (setup.sql), the extra columns only on the targets (target.sql).
USE te;
INSERT INTO t VALUES (1, 1, 'a'), (2, 2, 'b');
UPDATE t SET v = 10, s = 'A' WHERE id = 1;
DELETE FROM t WHERE id = 2;
INSERT INTO t VALUES (3, 3, 'c');
