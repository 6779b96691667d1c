-- Unique keys on generated columns, virtual and stored, whose values move
-- between rows inside a transaction and across a commit unit (the
-- dependency keys and compaction must see the generated values the
-- target will compute), with minimal images, where the generated column
-- is absent from the image.
CREATE DATABASE gk;
USE gk;
CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT,
  s INT AS (a + b) STORED, v INT AS (a * 10) VIRTUAL,
  UNIQUE KEY (s), UNIQUE KEY (v)) ENGINE=InnoDB;
INSERT INTO t (id, a, b) VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3);
BEGIN;
UPDATE t SET a = 0, b = 0 WHERE id = 1;
UPDATE t SET a = 1, b = 1 WHERE id = 2;
UPDATE t SET a = 2, b = 2 WHERE id = 1;
COMMIT;
UPDATE t SET a = 9 WHERE id = 3;
UPDATE t SET a = 5 WHERE id = 2;
SET SESSION binlog_row_image = MINIMAL;
UPDATE t SET b = 5 WHERE id = 1;
DELETE FROM t WHERE id = 3;
INSERT INTO t (id, a, b) VALUES (3, 9, 0);
UPDATE t SET a = 4 WHERE id = 3;
SET SESSION binlog_row_image = FULL;
