-- A session that logs DML as statements (binlog_format MIXED, MariaDB's
-- default, or STATEMENT) in a row-based binlog. prepl applies row events
-- only: it stops at the first statement-logged DML with an error that
-- names the file, the offset and the transaction's GTID, having applied
-- everything before that transaction and nothing of it. (MariaDB's
-- replica executes the statement.)
CREATE DATABASE mx;
USE mx;
CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO t VALUES (1, 1);
SET SESSION binlog_format = 'STATEMENT';
INSERT INTO t VALUES (2, 2);
SET SESSION binlog_format = 'ROW';
INSERT INTO t VALUES (3, 3);
