-- The source's table has a column after the target's last one
-- (target.sql drops it): MariaDB's replica applies the rows and ignores
-- that column's values, with full and with minimal row images, and an
-- update that changes only that column changes nothing on the target.
-- prepl refused the table.
USE sm;
INSERT INTO t VALUES (3, 3, 'c');
UPDATE t SET v = 10, extra = 'z' WHERE id = 1;
UPDATE t SET extra = 'y' WHERE id = 2;
DELETE FROM t WHERE id = 2;
SET SESSION binlog_row_image = MINIMAL;
INSERT INTO t VALUES (4, 4, 'd');
UPDATE t SET extra = 'w' WHERE id = 4;
UPDATE t SET v = 40 WHERE id = 4;
UPDATE t SET v = 30, extra = 'x' WHERE id = 3;
DELETE FROM t WHERE id = 1;
