-- An accent-insensitive unique key: 'e' and 'é' collide.
CREATE DATABASE ca;
USE ca;
CREATE TABLE t (id INT PRIMARY KEY, w VARCHAR(10) COLLATE utf8mb4_unicode_ci, UNIQUE KEY (w));
INSERT INTO t VALUES (1, 'e'), (2, 'resume');
DELETE FROM t WHERE id = 1;
INSERT INTO t VALUES (3, 'é');
UPDATE t SET w = 'x' WHERE id = 2;
INSERT INTO t VALUES (4, 'résumé');
DELETE FROM t WHERE id = 3;
INSERT INTO t VALUES (5, 'E');
UPDATE t SET w = 'É2' WHERE id = 5;
INSERT INTO t VALUES (6, 'e');
