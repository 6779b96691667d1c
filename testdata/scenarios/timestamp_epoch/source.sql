-- A TIMESTAMP of the second 0 with a fraction: '1970-01-01
-- 00:00:00.000001' in UTC, which MariaDB stores even in strict mode and
-- reads back as such (MariaDB's main.type_timestamp, MDEV-34061); only
-- the second 0 with the fraction 0 is the zero date. prepl decoded it as
-- the zero date with the fraction, '0000-00-00 00:00:00.000001', which
-- strict SQL refuses (1292) and lax SQL stores without its fraction.
CREATE DATABASE te;
USE te;
SET time_zone = '+00:00';
CREATE TABLE t (id INT PRIMARY KEY, a TIMESTAMP(6) NULL, b TIMESTAMP(1) NULL) ENGINE=InnoDB;
INSERT INTO t VALUES (1, '1970-01-01 00:00:00.000001', '1970-01-01 00:00:00.1'),
 (2, '1970-01-01 00:00:00.999999', NULL), (3, '0000-00-00 00:00:00', '0000-00-00 00:00:00');
UPDATE t SET a = '1970-01-01 00:00:00.5', b = '1970-01-01 00:00:00.9' WHERE id = 2;
-- MyISAM, as in main.type_timestamp: a refused statement there cannot be
-- taken back.
CREATE TABLE m (a TIMESTAMP(6) NULL) ENGINE=MyISAM;
INSERT INTO m VALUES ('1970-01-01 00:00:00.000001');
-- A table with an ENUM column, whose rows go-mysql decodes.
CREATE TABLE e (id INT PRIMARY KEY, a TIMESTAMP(3) NULL, k ENUM('x', 'y')) ENGINE=InnoDB;
INSERT INTO e VALUES (1, '1970-01-01 00:00:00.001', 'x'), (2, '1970-01-01 00:00:00.999', 'y');
UPDATE e SET k = 'y' WHERE id = 1;
-- As a key: rows found by such a value.
CREATE TABLE k (a TIMESTAMP(6) NOT NULL DEFAULT '2000-01-01 00:00:00' PRIMARY KEY, n INT) ENGINE=InnoDB;
INSERT INTO k VALUES ('1970-01-01 00:00:00.000001', 1), ('1970-01-01 00:00:00.000002', 2);
UPDATE k SET n = 3 WHERE a = '1970-01-01 00:00:00.000001';
DELETE FROM k WHERE n = 2;
-- The same instant said in another time zone.
SET time_zone = '+03:00';
INSERT INTO t VALUES (4, '1970-01-01 03:00:00.25', '1970-01-01 03:00:00.3');
