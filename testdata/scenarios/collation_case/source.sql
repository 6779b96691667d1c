-- A case-insensitive unique key: 'a' and 'A' are one key value, so
-- transactions that free and take it must stay in order.
CREATE DATABASE cc;
USE cc;
CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10) COLLATE utf8mb4_general_ci, UNIQUE KEY (name));
INSERT INTO t VALUES (1, 'a'), (2, 'b');
DELETE FROM t WHERE id = 1;
INSERT INTO t VALUES (3, 'A');
UPDATE t SET name = 'tmp' WHERE id = 2;
UPDATE t SET name = 'b' WHERE id = 3;
UPDATE t SET name = 'A' WHERE id = 2;
BEGIN;
UPDATE t SET name = 'x' WHERE id = 2;
UPDATE t SET name = 'a' WHERE id = 3;
UPDATE t SET name = 'B' WHERE id = 2;
COMMIT;
DELETE FROM t WHERE name = 'A';
INSERT INTO t VALUES (4, 'a');
