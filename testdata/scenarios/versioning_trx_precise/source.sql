-- A table with transaction-precise system versioning (ROW START and ROW
-- END as BIGINT UNSIGNED transaction ids): MariaDB 10.11 logs its DML as
-- statements even with binlog_format=ROW, and its replica executes them.
-- prepl applies rows only: it stops before the first such statement, with
-- a message that names the table and the reason, having applied
-- everything before that transaction and nothing of it.
CREATE DATABASE tp;
USE tp;
CREATE TABLE plain (id INT PRIMARY KEY, v INT);
INSERT INTO plain VALUES (1, 1);
CREATE TABLE t (id INT PRIMARY KEY, v INT,
  s BIGINT UNSIGNED AS ROW START INVISIBLE, e BIGINT UNSIGNED AS ROW END INVISIBLE,
  PERIOD FOR SYSTEM_TIME(s, e)) ENGINE=InnoDB WITH SYSTEM VERSIONING;
INSERT INTO plain VALUES (2, 2);
INSERT INTO t (id, v) VALUES (1, 1), (2, 2);
UPDATE t SET v = v + 1 WHERE id = 1;
INSERT INTO plain VALUES (3, 3);
