-- Identifiers that need quoting: reserved words, spaces, dots, quotes,
-- backticks, non-ASCII and case-distinct names, in schema, table, column
-- and key names, through row changes, DDL, and a view and a trigger
-- that name them. A table name with a dot must never be split at it.
SET NAMES utf8mb4;
CREATE DATABASE `we!rd db`;
USE `we!rd db`;
CREATE TABLE `select` (`from` INT PRIMARY KEY, `where` VARCHAR(10), `a b` INT, `c.d` INT, `e``f` INT, `g'h` INT, `"i"` INT, `ñandú` INT, `Ω` INT,
  UNIQUE KEY `key.name` (`where`)) ENGINE=InnoDB;
CREATE TABLE `t.dot` (`id` INT PRIMARY KEY, `v` INT) ENGINE=InnoDB;
CREATE TABLE `back``tick` (`id` INT PRIMARY KEY, `v` INT) ENGINE=InnoDB;
CREATE TABLE `表` (`列` INT PRIMARY KEY, `值` VARCHAR(10)) ENGINE=InnoDB;
CREATE TABLE `123` (`456` INT PRIMARY KEY, `1e5` INT) ENGINE=InnoDB;
INSERT INTO `select` VALUES (1, 'w', 2, 3, 4, 5, 6, 7, 8), (2, 'x', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE `select` SET `a b` = `a b` + 1, `e``f` = 40, `g'h` = 50 WHERE `from` = 1;
UPDATE `select` SET `from` = 3, `where` = 'z' WHERE `from` = 2;
DELETE FROM `select` WHERE `from` = 1;
INSERT INTO `t.dot` VALUES (1, 1), (2, 2);
UPDATE `t.dot` SET v = 20 WHERE id = 2;
INSERT INTO `back``tick` VALUES (1, 1);
UPDATE `back``tick` SET id = 2;
INSERT INTO `表` VALUES (1, '一'), (2, '二');
UPDATE `表` SET `值` = '三' WHERE `列` = 2;
INSERT INTO `123` VALUES (1, 100000);
UPDATE `123` SET `1e5` = `1e5` + 1;
-- DDL on such names mid-stream, then rows in the new shape.
ALTER TABLE `select` ADD COLUMN `new col` INT DEFAULT 9, RENAME COLUMN `c.d` TO `c.d.e`;
RENAME TABLE `t.dot` TO `t.dot.2`;
INSERT INTO `select` (`from`, `where`, `new col`, `c.d.e`) VALUES (10, 'n', 11, 12);
UPDATE `t.dot.2` SET v = v + 1;
CREATE VIEW `my view` AS SELECT `from`, `where` FROM `select`;
CREATE TABLE `audit log` (`id` INT AUTO_INCREMENT PRIMARY KEY, `what` VARCHAR(20)) ENGINE=InnoDB;
CREATE TRIGGER `trg.ins` AFTER INSERT ON `123` FOR EACH ROW INSERT INTO `audit log` (`what`) VALUES (CONCAT('ins ', NEW.`456`));
INSERT INTO `123` VALUES (2, 7);
CREATE DATABASE `Case`;
CREATE TABLE `Case`.`T` (`id` INT PRIMARY KEY) ENGINE=InnoDB;
INSERT INTO `Case`.`T` VALUES (1);
