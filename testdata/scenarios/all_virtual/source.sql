-- A table whose columns are all virtual: its row images carry only
-- recomputed values, so a row is found by nothing but being a row of the
-- table. MariaDB's replica deletes (and updates) one row per row of the
-- event; so must prepl, where it stopped ("its before image has no
-- column"). From MariaDB's test suite (gcol/vcol).
CREATE DATABASE av;
USE av;
CREATE TABLE t (a BLOB AS ('') VIRTUAL, b TIMESTAMP(4) AS ('') VIRTUAL);
INSERT IGNORE INTO t VALUES (), (), ();
DELETE IGNORE FROM t LIMIT 1;
UPDATE IGNORE t SET a = DEFAULT;
DELETE IGNORE FROM t;
INSERT IGNORE INTO t VALUES (), ();
-- A keyless table of a stored column and a virtual one, for contrast.
CREATE TABLE u (a INT AS (1) VIRTUAL, s INT AS (2) STORED);
INSERT IGNORE INTO u VALUES (), (), ();
DELETE FROM u LIMIT 2;
