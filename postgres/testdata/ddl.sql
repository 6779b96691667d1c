-- MariaDB's SHOW CREATE TABLE of every mapped type
CREATE TABLE `t` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `ti` tinyint(4) DEFAULT NULL, `tu` tinyint(3) unsigned DEFAULT 7, `su` smallint(5) unsigned NOT NULL DEFAULT 0,
  `mu` mediumint(8) unsigned DEFAULT NULL, `iu` int(10) unsigned DEFAULT NULL, `bu` bigint(20) unsigned DEFAULT NULL,
  `de` decimal(65,30) DEFAULT NULL, `d2` decimal(10,2) unsigned DEFAULT NULL, `f` float DEFAULT NULL, `dbl` double DEFAULT NULL,
  `b64` bit(64) DEFAULT b'0', `e` enum('a','b','it''s') DEFAULT 'a', `s` set('x','y','z') DEFAULT NULL, `y` year(4) DEFAULT NULL,
  `da` date DEFAULT NULL, `dt` datetime(6) DEFAULT NULL, `ts` timestamp(6) NOT NULL DEFAULT current_timestamp(6) ON UPDATE current_timestamp(6),
  `tm` time(6) DEFAULT NULL, `c` char(10) DEFAULT NULL, `l1` varchar(50) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL,
  `tx` text DEFAULT NULL, `bn` binary(4) DEFAULT NULL, `bl` blob DEFAULT NULL,
  `j` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL CHECK (json_valid(`j`)),
  `g` int(11) GENERATED ALWAYS AS (`id` * 2) VIRTUAL,
  PRIMARY KEY (`id`), UNIQUE KEY `u_l1` (`l1`(10)), KEY `k_e` (`e`,`s`), FULLTEXT KEY `ft` (`tx`),
  CONSTRAINT `fk_p` FOREIGN KEY (`ti`) REFERENCES `p` (`id`) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_uca1400_ai_ci
----
CREATE TABLE IF NOT EXISTS d2.Mixed (ID INT PRIMARY KEY, Name VARCHAR(20) NOT NULL UNIQUE)
----
ALTER TABLE t ADD COLUMN x INT NOT NULL DEFAULT 5 AFTER id, DROP COLUMN y, MODIFY z BIGINT UNSIGNED NOT NULL, RENAME COLUMN a TO b, CHANGE c d VARCHAR(10) DEFAULT 'q'
----
ALTER TABLE db.t ADD UNIQUE KEY uk (a, b), DROP INDEX k, ADD INDEX (x), ADD KEY kp (v(8)), DROP PRIMARY KEY, ADD PRIMARY KEY (id, a)
----
ALTER TABLE t MODIFY e ENUM('a','b','c') NOT NULL
----
CREATE INDEX ix ON t (a, b DESC)
----
DROP INDEX ix ON t
----
RENAME TABLE a TO b, db.c TO other.c
----
ALTER TABLE t RENAME TO t2
----
TRUNCATE TABLE t
----
DROP TABLE IF EXISTS a, other.b
----
CREATE DATABASE IF NOT EXISTS shop
----
DROP DATABASE shop
----
CREATE TABLE sp (id INT PRIMARY KEY, pt POINT NOT NULL)
----
CREATE TABLE z (id INT PRIMARY KEY, d DATE NOT NULL)
----
ALTER TABLE t ENGINE=InnoDB
----
CREATE OR REPLACE TABLE t (id INT)
----
CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1
----
GRANT ALL ON *.* TO x
----
ALTER TABLE t ADD FULLTEXT INDEX ft (tx)
----
ANALYZE TABLE t, other.u
----
OPTIMIZE NO_WRITE_TO_BINLOG TABLE t
