-- What MariaDB's replica does with slave_ddl_exec_mode=IDEMPOTENT, its
-- default: it runs DROP TRIGGER, DROP DATABASE and DROP TABLE of a name
-- the target does not have as if with IF EXISTS, and CREATE TABLE of a
-- name the target has as CREATE OR REPLACE (MariaDB's main.trigger-compat
-- drops triggers the test wrote as files, outside the binlog). It stops
-- on DROP VIEW, PROCEDURE and FUNCTION of a missing name (checked), which
-- are not here. Objects the target lacks are made on the source with
-- sql_log_bin=0; the table only the target has is in target.sql.
USE di;
CREATE TABLE t (id INT PRIMARY KEY);
SET sql_log_bin = 0;
CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.id = NEW.id + 1;
CREATE DATABASE dx;
CREATE TABLE t2 (id INT PRIMARY KEY);
SET sql_log_bin = 1;
DROP TRIGGER tr;
INSERT INTO t VALUES (1);
DROP DATABASE dx;
INSERT INTO t VALUES (2);
DROP TABLE t2;
INSERT INTO t VALUES (3);
CREATE TABLE x (id INT PRIMARY KEY);
INSERT INTO x VALUES (1);
CREATE TABLE IF NOT EXISTS x (a INT);
INSERT INTO x VALUES (2);
