-- A DDL whose source time is near the epoch, in a session with a time
-- zone east of UTC (from MariaDB's test main.type_timestamp): the DDL runs
-- in the source's session (time zone +03:00, timestamp 1234), and the
-- position stored after it holds the source's time, 1970-01-01 00:20:34
-- UTC, which in +03:00 reads as a time before the epoch.
CREATE DATABASE ep;
USE ep;
SET TIMESTAMP = 1234;
SET time_zone = '+03:00';
CREATE TABLE t1 (id INT PRIMARY KEY, ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, n DATETIME DEFAULT NOW());
INSERT INTO t1 (id) VALUES (1);
ALTER TABLE t1 ADD COLUMN added DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP;
INSERT INTO t1 (id) VALUES (2);
SET TIMESTAMP = 1;
CREATE TABLE t2 (id INT PRIMARY KEY);
INSERT INTO t2 VALUES (1);
SET time_zone = '-05:00', TIMESTAMP = 2147483647;
CREATE TABLE t3 (id INT PRIMARY KEY, ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP);
INSERT INTO t3 (id) VALUES (1);
SET time_zone = DEFAULT, TIMESTAMP = DEFAULT;
CREATE TABLE t4 (id INT PRIMARY KEY);
INSERT INTO t4 VALUES (1);
