-- A key WITHOUT OVERLAPS (MariaDB 10.5+) is no equality key: rows of one
-- id conflict when their periods overlap, whatever their bounds, and
-- MariaDB refuses INSERT ... ON DUPLICATE KEY UPDATE on such a table
-- (error 1235). Compaction must leave its rows in source order, and
-- writeset must order changes to one id whose periods differ.
CREATE DATABASE wo;
USE wo;
CREATE TABLE t2 (id INT, f INT, s DATE, e DATE, PERIOD FOR p(s, e), PRIMARY KEY (id, p WITHOUT OVERLAPS)) ENGINE=InnoDB;
INSERT INTO t2 VALUES (1, 0, '2000-01-01', '2000-01-02');
CREATE TABLE t3 (id INT, f BLOB, UNIQUE (f)) ENGINE=InnoDB;
START TRANSACTION;
UPDATE t2 SET f = 20;
INSERT INTO t3 (id) VALUES (1);
COMMIT;
INSERT INTO t2 VALUES (2, 1, '2000-01-01', '2000-03-01');
-- The same id, other bounds, overlapping periods: each change must wait
-- for the one before.
DELETE FROM t2 WHERE id = 2;
INSERT INTO t2 VALUES (2, 2, '2000-02-01', '2000-04-01');
UPDATE t2 SET e = '2000-02-15' WHERE id = 2;
INSERT INTO t2 VALUES (2, 3, '2000-02-15', '2000-05-01');
BEGIN;
UPDATE t2 SET e = '2000-02-10' WHERE id = 2 AND s = '2000-02-01';
UPDATE t2 SET s = '2000-02-10' WHERE id = 2 AND f = 3;
INSERT INTO t2 VALUES (3, 1, '2000-01-01', '2000-01-05'), (3, 2, '2000-01-05', '2000-01-09');
COMMIT;
UPDATE t2 SET f = f + 10;
CREATE TABLE r (id INT, s DATE, e DATE, v INT, PERIOD FOR p(s, e), UNIQUE KEY (id, p WITHOUT OVERLAPS)) ENGINE=InnoDB;
INSERT INTO r VALUES (1, '2020-01-01', '2020-06-01', 1), (NULL, '2020-01-01', '2020-06-01', 1), (NULL, '2020-01-01', '2020-06-01', 2);
UPDATE r SET v = v + 1;
DELETE FROM r WHERE id IS NULL AND v = 2;
INSERT INTO r VALUES (1, '2020-06-01', '2020-07-01', 5);
