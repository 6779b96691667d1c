-- The stream renames mysql.proc away and back (from MariaDB's test
-- suite): while it is missing, the server cannot list routines, and prepl,
-- which digests the target's catalog (routines included) before every DDL
-- to run it exactly once across a crash, must still apply the DDLs in
-- between. At the end mysql.proc is back, with the routine in it.
CREATE DATABASE pr;
USE pr;
CREATE PROCEDURE p1() SELECT 1;
RENAME TABLE mysql.proc TO pr.proc_backup;
CREATE TABLE t0 (id INT PRIMARY KEY);
INSERT INTO t0 VALUES (1);
CREATE TABLE mysql.proc LIKE pr.proc_backup;
CREATE TABLE t1 (id INT PRIMARY KEY);
INSERT INTO t1 VALUES (1);
DROP TABLE mysql.proc;
ALTER TABLE t1 ADD COLUMN v INT;
RENAME TABLE pr.proc_backup TO mysql.proc;
CREATE TABLE t2 (id INT PRIMARY KEY);
INSERT INTO t2 VALUES (1);
