-- binlog_row_metadata=FULL, as CDC setups run it: table maps carry column
-- names, key columns, charsets, ENUM and SET values and signedness, and
-- prepl takes the names from the binlog. Through DDL that adds, drops and
-- moves columns mid-stream (a column added FIRST shifts every position),
-- with minimal images, unsigned values and ENUM/SET.
SET GLOBAL binlog_row_metadata = FULL;
CREATE DATABASE rm;
USE rm;
CREATE TABLE t (id INT UNSIGNED PRIMARY KEY, a BIGINT UNSIGNED, e ENUM('x', 'y', 'z'), s SET('p', 'q'), c VARCHAR(10) CHARACTER SET latin1) ENGINE=InnoDB;
INSERT INTO t VALUES (4294967295, 18446744073709551615, 'y', 'p,q', 'café'), (1, 0, 'x', '', 'b');
UPDATE t SET a = a - 1, e = 'z' WHERE id = 4294967295;
ALTER TABLE t ADD COLUMN first_col INT DEFAULT 5 FIRST;
INSERT INTO t (id, a, first_col) VALUES (2, 2, 20);
UPDATE t SET first_col = 7, c = 'moved' WHERE id = 1;
ALTER TABLE t DROP COLUMN e, MODIFY COLUMN c VARCHAR(10) CHARACTER SET latin1 AFTER id;
SET SESSION binlog_row_image = MINIMAL;
UPDATE t SET s = 'q' WHERE id = 2;
DELETE FROM t WHERE id = 1;
INSERT INTO t (id, c) VALUES (3, 'three');
SET SESSION binlog_row_image = FULL;
SET GLOBAL binlog_row_metadata = NO_LOG;
