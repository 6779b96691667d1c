-- Accounts and privileges, which the binlog holds as statements: users
-- with passwords changed and renamed, roles granted, table, column and
-- routine grants revoked in part, and maintenance statements between
-- row changes. The dump compares SHOW GRANTS of every account.
CREATE DATABASE acc;
USE acc;
CREATE TABLE t (id INT PRIMARY KEY, v INT, secret INT) ENGINE=InnoDB;
CREATE PROCEDURE p() SELECT 1;
CREATE USER 'app'@'%' IDENTIFIED BY 'secret';
GRANT SELECT, INSERT ON acc.* TO 'app'@'%';
CREATE ROLE reader;
GRANT SELECT (id, v) ON acc.t TO reader;
GRANT reader TO 'app'@'%';
INSERT INTO t VALUES (1, 1, 1);
ALTER USER 'app'@'%' IDENTIFIED BY 'other';
SET PASSWORD FOR 'app'@'%' = PASSWORD('third');
RENAME USER 'app'@'%' TO 'app2'@'10.0.0.%';
REVOKE INSERT ON acc.* FROM 'app2'@'10.0.0.%';
GRANT EXECUTE ON PROCEDURE acc.p TO 'app2'@'10.0.0.%';
CREATE USER IF NOT EXISTS 'ops'@'localhost' IDENTIFIED BY 'ops';
GRANT ALL ON acc.* TO 'ops'@'localhost' WITH GRANT OPTION;
SET DEFAULT ROLE reader FOR 'app2'@'10.0.0.%';
CREATE USER 'gone'@'%';
INSERT INTO t VALUES (2, 2, 2);
DROP USER 'gone'@'%';
FLUSH PRIVILEGES;
ANALYZE TABLE t;
OPTIMIZE TABLE t;
INSERT INTO t VALUES (3, 3, 3);
