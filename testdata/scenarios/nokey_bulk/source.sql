-- Big transactions on tables without a primary key (MariaDB's
-- main.multi_update_big, smaller): consecutive inserts of one
-- transaction go as multi-row INSERTs, more than one statement's worth
-- (1000 rows), broken where the session changes (an ENUM's empty error
-- value needs the lax mode, relaxed unique checks) or another table's
-- rows come between; duplicate rows stay duplicates, and deletes remove
-- one copy each.
CREATE DATABASE nb;
USE nb;
SET sql_mode = '';
CREATE TABLE t1 (a INT NOT NULL, b INT NOT NULL, e ENUM('x', 'y') NOT NULL DEFAULT 'x') ENGINE=InnoDB;
CREATE TABLE m1 (a INT NOT NULL, b INT NOT NULL) ENGINE=MyISAM;
INSERT INTO t1 (a, b) SELECT seq, seq % 7 FROM seq_1_to_2500;
INSERT INTO m1 SELECT seq, seq FROM seq_1_to_2500;
ALTER TABLE t1 ADD INDEX i1 (a);
ALTER TABLE m1 ADD INDEX i1 (a);
BEGIN;
INSERT INTO t1 (a, b) SELECT seq, 1 FROM seq_1_to_5;
INSERT INTO t1 (a, b) SELECT seq, 1 FROM seq_1_to_5;
INSERT INTO t1 (a, b, e) VALUES (9, 9, 'z'), (9, 9, 'y'), (10, 10, 'x');
SET unique_checks = 0;
INSERT INTO t1 (a, b) VALUES (11, 11), (12, 12);
SET unique_checks = 1;
INSERT INTO t1 (a, b) VALUES (13, 13);
INSERT INTO m1 VALUES (1, 1);
INSERT INTO t1 (a, b) VALUES (14, 14);
COMMIT;
DELETE FROM t1 WHERE a > 2000;
DELETE FROM t1 WHERE a <= 3 LIMIT 4;
DELETE FROM m1 WHERE a < 100;
CREATE TABLE t2 LIKE t1;
INSERT INTO t2 SELECT * FROM t1;
DELETE t1, t2 FROM t1, t2 WHERE t1.b = t2.a AND t1.a < 50;
