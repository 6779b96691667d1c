-- A value the source stored that prepl's strict SQL cannot say: a
-- FLOAT(30,0) holding the float nearest 1e30 (1.0000000150474662e30, above
-- the column's 10^30 - 1 as a double; MariaDB's test main.type_float).
-- The server refuses it as SQL (error 1264); as the binlog's rows event it
-- stores the source's bytes, as MariaDB's replica does.
CREATE DATABASE vr;
USE vr;
CREATE TABLE t (id INT PRIMARY KEY, f FLOAT(30,0), d DOUBLE(200,0));
INSERT INTO t VALUES (1, 1e29, 1e199), (2, -1e29, -1e199);
INSERT INTO t VALUES (3, 1e30, 1e200), (4, -1e30, -1e200);
INSERT IGNORE INTO t VALUES (5, 2e30, 2e200), (6, -2e30, -2e200);
UPDATE t SET id = id + 10 WHERE id > 2;
CREATE TABLE k (f FLOAT(30,0), n INT);
INSERT INTO k VALUES (1e30, 1), (1e30, 2);
DELETE FROM k WHERE n = 1;
-- The same in a MyISAM table, which cannot take back what a refused
-- statement wrote: the transaction is seen to hold such a value before
-- it is sent, and goes as its rows events from the start.
CREATE TABLE m (id INT PRIMARY KEY, f FLOAT(30,0), d DOUBLE) ENGINE=MyISAM;
INSERT INTO m VALUES (1, 1e29, 1), (2, 1e30, 2);
UPDATE m SET d = d + 1 WHERE id = 2;
