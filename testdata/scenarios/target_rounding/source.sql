-- The target's DECIMAL has fewer decimals than the source's (target.sql):
-- strict mode rounds 1.2345 to 1.23 without an error, so prepl checks the
-- table map's types against the target's columns and stops before the
-- table's first row, as MariaDB's replica does (error 1677). It used to
-- store 1.23 and exit 0.
USE tr;
INSERT INTO t VALUES (1, 1.2345, '2001-02-03 04:05:06.123456');
INSERT INTO t VALUES (2, 2.5, '2001-02-03 04:05:06');
