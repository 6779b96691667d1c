-- Frameworks send SET NAMES ... COLLATE on every connection, and their
-- migrations are DDL. The Query event carries the session's character
-- sets as collation ids (character_set_client, collation_connection,
-- collation_server); the replica, and mariadb-binlog's output, set the
-- DDL's session from them. Each DDL here runs under another SET NAMES,
-- and its string literals (a DEFAULT, a comment) must reach the target
-- as the source read them.
CREATE DATABASE sn;
USE sn;
SET NAMES utf8mb4 COLLATE utf8mb4_bin;
CREATE TABLE t1 (a VARCHAR(10) PRIMARY KEY);
INSERT INTO t1 VALUES ('x');

SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE TABLE t2 (a VARCHAR(10) PRIMARY KEY, d VARCHAR(10) DEFAULT 'é', c INT COMMENT 'ü');
INSERT INTO t2 (a) VALUES ('y');

SET NAMES utf8mb4 COLLATE utf8mb4_general_ci;
CREATE TABLE t3 (a VARCHAR(10) PRIMARY KEY);
INSERT INTO t3 VALUES ('z');

SET NAMES latin1 COLLATE latin1_bin;
CREATE TABLE t4 (a VARCHAR(10) PRIMARY KEY, d VARCHAR(10) DEFAULT 'é');
INSERT INTO t4 (a) VALUES ('w');

SET NAMES utf8mb3 COLLATE utf8mb3_unicode_ci;
CREATE TABLE t5 (a VARCHAR(10) PRIMARY KEY, d VARCHAR(10) DEFAULT 'ñ');
INSERT INTO t5 (a) VALUES ('v');

SET NAMES utf8mb4 COLLATE utf8mb4_unicode_520_ci;
ALTER TABLE t1 ADD COLUMN b VARCHAR(10) DEFAULT 'ö';
INSERT INTO t1 (a) VALUES ('u');

SET NAMES binary;
CREATE TABLE t6 (a VARBINARY(10) PRIMARY KEY);
INSERT INTO t6 VALUES ('t');

SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin;
CREATE TABLE t7 (a VARCHAR(10) PRIMARY KEY);
INSERT INTO t7 VALUES ('s');

SET character_set_client = latin1, collation_connection = utf8mb4_bin, collation_server = latin2_bin;
CREATE DATABASE db_server_coll;
CREATE TABLE db_server_coll.t (a VARCHAR(10) PRIMARY KEY, d VARCHAR(10) DEFAULT 'ab');
INSERT INTO db_server_coll.t (a) VALUES ('r');

-- MariaDB 10.10's UCA 14 collations have ids past 2047, which
-- information_schema.COLLATIONS does not list.
SET NAMES utf8mb4 COLLATE utf8mb4_uca1400_as_cs;
SET collation_server = utf8mb4_uca1400_as_cs;
CREATE DATABASE db_uca;
CREATE TABLE db_uca.t (a VARCHAR(10) PRIMARY KEY);
INSERT INTO db_uca.t VALUES ('q'), ('Q');
