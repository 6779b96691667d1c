-- AUTO_INCREMENT as sources use it: an explicit 0 kept as 0
-- (NO_AUTO_VALUE_ON_ZERO), the increment and offset of a multi-writer
-- setup, negative and explicit ids above the counter, INSERT ... ON
-- DUPLICATE KEY UPDATE and REPLACE (row events: an update, or a delete and
-- an insert), and an id taken back by an UPDATE. The rows carry the ids
-- the source chose; the target must store exactly those.
CREATE DATABASE ai;
USE ai;
CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10), u INT, UNIQUE KEY (u)) ENGINE=InnoDB;
CREATE TABLE big (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB AUTO_INCREMENT=18446744073709551610;
SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO');
INSERT INTO t VALUES (0, 'zero', 0);
INSERT INTO t (v, u) VALUES ('one', 1), ('two', 2);
INSERT INTO t VALUES (-5, 'neg', -5);
SET SESSION sql_mode = DEFAULT;
INSERT INTO t (id, v, u) VALUES (0, 'auto', 3);
SET SESSION auto_increment_increment = 10, auto_increment_offset = 3;
INSERT INTO t (v, u) VALUES ('a', 4), ('b', 5), ('c', 6);
INSERT INTO t VALUES (1000, 'explicit', 7);
INSERT INTO t (v, u) VALUES ('after', 8);
SET SESSION auto_increment_increment = 1, auto_increment_offset = 1;
INSERT INTO t (v, u) VALUES ('dup', 1) ON DUPLICATE KEY UPDATE v = 'upserted';
INSERT INTO t (v, u) VALUES ('new', 9) ON DUPLICATE KEY UPDATE v = 'never';
REPLACE INTO t (id, v, u) VALUES (1000, 'replaced', 70);
REPLACE INTO t (v, u) VALUES ('rep-u', 2);
UPDATE t SET id = 2000 WHERE v = 'after';
INSERT INTO big (v) VALUES (1), (2), (3);
DELETE FROM big WHERE v = 2;
