-- PAD SPACE: 'x' and 'x ' are one key value.
CREATE DATABASE cp;
USE cp;
CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_general_ci, UNIQUE KEY (s));
CREATE TABLE c (id INT PRIMARY KEY, s CHAR(5) COLLATE latin1_swedish_ci, UNIQUE KEY (s)) CHARACTER SET latin1;
INSERT INTO t VALUES (1, 'x'), (2, 'y ');
DELETE FROM t WHERE id = 1;
INSERT INTO t VALUES (3, 'x ');
DELETE FROM t WHERE id = 2;
INSERT INTO t VALUES (4, 'y');
UPDATE t SET s = 'X  ' WHERE id = 3;
INSERT INTO c VALUES (1, 'ab');
DELETE FROM c WHERE id = 1;
INSERT INTO c VALUES (2, 'ab  ');
