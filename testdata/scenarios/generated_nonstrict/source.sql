-- Generated columns the target computes on every write of a row (an
-- indexed virtual column, a stored one) from values a non-strict source
-- session took with a warning: a zero date plus an interval, a
-- concatenation longer than the column. MariaDB's replica applies rows
-- events in a non-strict sql_mode (NO_AUTO_VALUE_ON_ZERO) and computes
-- the same NULL or cut value; a strict session refuses the row (errors
-- 1292, 1406), on INSERT and on any UPDATE of the row, a DELETE not.
CREATE DATABASE gn;
USE gn;
SET sql_mode = '';
CREATE TABLE t2 (c1 INT PRIMARY KEY, c5 DATE, c6 DATE AS (c5 + INTERVAL 30 DAY) VIRTUAL, KEY (c6)) ENGINE=InnoDB;
INSERT INTO t2 (c1, c5) VALUES (1, 0);
INSERT INTO t2 (c1, c5) VALUES (2, '2000-01-01');
UPDATE t2 SET c5 = 0 WHERE c1 = 2;
UPDATE t2 SET c5 = '2001-01-01' WHERE c1 = 1;
UPDATE t2 SET c5 = 0 WHERE c1 = 1;
CREATE TABLE t (id INT, a VARCHAR(1), b VARCHAR(1), c VARCHAR(1) AS (CONCAT(a, b)) VIRTUAL, KEY (c)) ENGINE=InnoDB;
INSERT INTO t (id, a, b) VALUES (0, '0', '9');
INSERT INTO t (id, a, b) VALUES (1, '1', '8'), (2, '2', NULL);
UPDATE t SET id = 7 WHERE id = 0;
UPDATE t SET b = '5' WHERE id = 2;
DELETE FROM t WHERE id = 1;
CREATE TABLE s (id INT PRIMARY KEY, a VARCHAR(3), c VARCHAR(1) AS (a) PERSISTENT, UNIQUE KEY (a)) ENGINE=InnoDB;
INSERT INTO s (id, a) VALUES (1, 'abc'), (2, 'x');
BEGIN;
UPDATE s SET a = 'yz' WHERE id = 2;
INSERT INTO s (id, a) VALUES (3, 'def');
UPDATE s SET a = 'ghi' WHERE id = 3;
INSERT INTO t2 (c1, c5) VALUES (3, 0);
UPDATE t2 SET c5 = 0 WHERE c1 = 3;
COMMIT;
DELETE FROM s WHERE id = 1;
DELETE FROM t2 WHERE c1 = 2;
-- A virtual column in no index is not computed on write: no error to
-- avoid, and the row keeps the strict session.
CREATE TABLE u (id INT PRIMARY KEY, d DATE, v DATE AS (d + INTERVAL 1 DAY) VIRTUAL) ENGINE=InnoDB;
INSERT INTO u (id, d) VALUES (1, 0);
-- An invalid date a source with ALLOW_INVALID_DATES stored, under an
-- indexed virtual column.
SET sql_mode = 'ALLOW_INVALID_DATES';
INSERT INTO t2 (c1, c5) VALUES (4, '2000-02-30');
UPDATE t2 SET c5 = '2001-04-31' WHERE c1 = 4;
