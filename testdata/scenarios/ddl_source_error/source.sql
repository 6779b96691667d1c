-- A DDL that failed on the source after changing something is logged
-- with the error it got (the Query event's error_code): a CREATE OR
-- REPLACE TABLE that dropped the old table and then failed (MariaDB's
-- period.overlaps, error 4156). MariaDB's replica runs it, expects that
-- very error, and goes on; the old table is gone there too. (Each failing
-- statement runs in a block with a handler, so that the client goes on;
-- the server logs it as it would alone.)
CREATE DATABASE de;
USE de;
CREATE TABLE t (id INT PRIMARY KEY);
INSERT INTO t VALUES (1);
DELIMITER ;;
BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;
  CREATE OR REPLACE TABLE t (id INT, s DATE, e DATE, PERIOD FOR p(s, e), PRIMARY KEY (id, q WITHOUT OVERLAPS));
END;;
DELIMITER ;
CREATE TABLE t (id INT PRIMARY KEY, v INT);
INSERT INTO t VALUES (2, 2);
DELIMITER ;;
BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;
  CREATE OR REPLACE TABLE t (id INT, s DATE, e DATE, PRIMARY KEY (id, p WITHOUT OVERLAPS));
END;;
DELIMITER ;
CREATE TABLE t (id INT PRIMARY KEY, w INT);
INSERT INTO t VALUES (3, 3);
DELIMITER ;;
BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;
  CREATE OR REPLACE TABLE t (id INT, s DATE, e DATE, PERIOD FOR p(s, e), PRIMARY KEY (id, s, p WITHOUT OVERLAPS));
END;;
DELIMITER ;
CREATE TABLE u (id INT PRIMARY KEY);
INSERT INTO u VALUES (4);
