-- A unique prefix index: 'abcdef' and 'abcxyz' collide on their first 3
-- characters.
CREATE DATABASE pu;
USE pu;
CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), b BLOB, UNIQUE KEY (s(3)), UNIQUE KEY (b(2)));
INSERT INTO t VALUES (1, 'abcdef', 'zz1'), (2, 'xyz', 'yy1');
DELETE FROM t WHERE id = 1;
INSERT INTO t VALUES (3, 'abcxyz', 'zz2');
UPDATE t SET s = 'qqq', b = 'qq' WHERE id = 2;
UPDATE t SET s = 'xyzzy', b = 'yy2' WHERE id = 3;
INSERT INTO t VALUES (4, 'abc', 'zz3');
