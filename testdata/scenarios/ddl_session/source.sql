-- A DDL's meaning depends on session state its Query event carries, which
-- MariaDB's replica (and mariadb-binlog's output) restores before running
-- it: the statement's time (DEFAULT CURRENT_TIMESTAMP filled into the rows
-- an ALTER adds a column to), explicit_defaults_for_timestamp (what a bare
-- TIMESTAMP column means in CREATE TABLE), auto_increment_increment and
-- auto_increment_offset (the numbers an ALTER gives existing rows when it
-- adds an AUTO_INCREMENT column), check_constraint_checks and
-- lc_time_names. The source's clock is set far in the past, so the
-- target's own "now" would show; no later row event overwrites what a DDL
-- wrote, so a difference stays.
CREATE DATABASE ds;
USE ds;
CREATE TABLE t (id INT PRIMARY KEY, v INT);
INSERT INTO t VALUES (1, 1), (2, 2);
SET TIMESTAMP = UNIX_TIMESTAMP('2001-02-03 04:05:06.123456');
ALTER TABLE t ADD COLUMN added DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6);
ALTER TABLE t ADD COLUMN added_ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP;
SET TIMESTAMP = DEFAULT;
INSERT INTO t (id, v) VALUES (3, 3);
UPDATE t SET v = v + 10 WHERE id = 3;

SET SESSION explicit_defaults_for_timestamp = OFF;
CREATE TABLE e_off (id INT PRIMARY KEY, ts TIMESTAMP, ts2 TIMESTAMP);
SET SESSION explicit_defaults_for_timestamp = ON;
CREATE TABLE e_on (id INT PRIMARY KEY, ts TIMESTAMP);
INSERT INTO e_on (id) VALUES (1);

SET SESSION auto_increment_increment = 5, auto_increment_offset = 3;
CREATE TABLE a (v INT);
INSERT INTO a VALUES (10), (20), (30);
ALTER TABLE a ADD COLUMN id INT AUTO_INCREMENT PRIMARY KEY FIRST;
SET SESSION auto_increment_increment = 1, auto_increment_offset = 1;
UPDATE a SET v = v + 1 WHERE id = 8;
DELETE FROM a WHERE id = 13;

-- MariaDB: check_constraint_checks = OFF lets an ALTER add a CHECK that
-- existing rows fail; sql_if_exists = ON makes DROP and ALTER of a
-- missing table a warning.
CREATE TABLE ck (id INT PRIMARY KEY, v INT);
INSERT INTO ck VALUES (1, -5), (2, 5);
SET SESSION check_constraint_checks = OFF;
ALTER TABLE ck ADD CONSTRAINT v_positive CHECK (v > 0);
SET SESSION check_constraint_checks = ON;
UPDATE ck SET v = 6 WHERE id = 2;
SET SESSION sql_if_exists = ON;
DROP TABLE missing_table;
ALTER TABLE missing_table ADD COLUMN x INT;
SET SESSION sql_if_exists = OFF;
INSERT INTO ck VALUES (3, 3);

-- lc_time_names: the month an ALTER's DEFAULT expression writes into the
-- existing rows is named in the source session's language.
CREATE TABLE lt (id INT PRIMARY KEY);
INSERT INTO lt VALUES (1);
SET SESSION lc_time_names = 'fr_FR', TIMESTAMP = UNIX_TIMESTAMP('2001-02-03 04:05:06');
ALTER TABLE lt ADD COLUMN m VARCHAR(30) DEFAULT (DATE_FORMAT(NOW(), '%M'));
SET SESSION lc_time_names = 'en_US', TIMESTAMP = DEFAULT;
INSERT INTO lt (id) VALUES (2);
