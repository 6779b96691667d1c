-- A table of the old format before the binlog starts, on the source and
-- on every target: a database upgraded from MariaDB 10.0 and cloned.
CREATE DATABASE ot;
SET GLOBAL mysql56_temporal_format = OFF;
CREATE TABLE ot.pre (id INT PRIMARY KEY, t2 TIME(2), d4 DATETIME(4), s6 TIMESTAMP(6) NULL, d0 DATETIME, t0 TIME);
SET GLOBAL mysql56_temporal_format = ON;
