-- A system-versioned table with a long unique key (UNIQUE ... USING
-- HASH): its row images carry the hidden row_start and row_end columns
-- after the visible ones, and the hidden hash column of the long unique
-- key is not among them. prepl stopped ("has 1 columns on the target but
-- 4 in the binlog"). From MariaDB's test suite (versioning).
CREATE DATABASE vh;
USE vh;
CREATE TABLE t (c INT, UNIQUE (c) USING HASH) WITH SYSTEM VERSIONING;
INSERT INTO t VALUES (0), (1), (NULL);
UPDATE t SET c = 2 WHERE c = 1;
DELETE FROM t WHERE c = 0;
CREATE TABLE u (id INT PRIMARY KEY, b BLOB, v INT, UNIQUE (b), UNIQUE (v) USING HASH) WITH SYSTEM VERSIONING;
INSERT INTO u VALUES (1, 'x', 1), (2, 'y', 2);
UPDATE u SET b = 'z', v = 3 WHERE id = 2;
DELETE FROM u;
