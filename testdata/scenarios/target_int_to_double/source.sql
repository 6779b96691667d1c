-- The target's column is a DOUBLE where the source's is a BIGINT
-- (target.sql): strict mode stores 9007199254740993 as
-- 9007199254740992 without an error or a warning, so prepl refuses the
-- table from its table map before its first row, as MariaDB's replica
-- does (error 1677). It used to store the rounded value and exit 0.
USE tb;
INSERT INTO t VALUES (1, 9007199254740993);
INSERT INTO t VALUES (2, 42);
