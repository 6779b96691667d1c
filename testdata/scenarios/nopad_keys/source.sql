-- Trailing spaces in keys: under a NO PAD collation 'a' and 'a ' are two
-- keys, under PAD SPACE one; a CHAR(n) loses its trailing spaces in the
-- row image, a VARCHAR keeps them. Rows keyed so are inserted, updated
-- and deleted, and keys change between such values inside a unit.
SET NAMES utf8mb4;
CREATE DATABASE np;
USE np;
CREATE TABLE n (k VARCHAR(10) COLLATE utf8mb4_nopad_bin PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE p (k VARCHAR(10) COLLATE utf8mb4_bin PRIMARY KEY, u VARCHAR(10) COLLATE utf8mb4_general_nopad_ci, v INT, UNIQUE KEY (u)) ENGINE=InnoDB;
CREATE TABLE c (k CHAR(5) COLLATE utf8mb4_bin PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO n VALUES ('a', 1), ('a ', 2), ('a  ', 3);
UPDATE n SET v = v + 10 WHERE k = 'a ';
DELETE FROM n WHERE k = 'a';
UPDATE n SET k = 'a' WHERE k = 'a  ';
INSERT INTO p VALUES ('x', 'u', 1), ('y ', 'u ', 2);
UPDATE p SET v = 20 WHERE k = 'y';
UPDATE p SET u = 'U  ' WHERE k = 'x';
DELETE FROM p WHERE u = 'u ';
INSERT INTO c VALUES ('a', 1), ('b  ', 2);
UPDATE c SET v = 10 WHERE k = 'a  ';
UPDATE c SET k = 'z ' WHERE k = 'b';
DELETE FROM c WHERE k = 'a';
