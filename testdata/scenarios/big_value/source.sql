-- A 10 MiB value of every byte value (quotes, backslashes and NULs among
-- them) in one row, inserted and updated: in hex, prepl's statement would
-- be 20 MiB, past the target's default max_allowed_packet (16 MiB), where
-- MariaDB's replica applies the row event itself; a value that large goes
-- as its own bytes, escaped.
CREATE DATABASE bv;
USE bv;
CREATE TABLE b (id INT PRIMARY KEY, data LONGBLOB, txt LONGTEXT CHARACTER SET utf8mb4) ENGINE=InnoDB;
SET @all = (SELECT GROUP_CONCAT(CHAR(seq) SEPARATOR '') FROM seq_0_to_255);
INSERT INTO b VALUES (1, REPEAT(CAST(@all AS BINARY), 10 * 4096), NULL);
UPDATE b SET id = 2, txt = REPEAT('é\\''', 100000);
