-- A source with log_bin_compress=ON (MariaDB): query and row events over
-- log_bin_compress_min_len are written zlib-compressed (QUERY_COMPRESSED,
-- WRITE/UPDATE/DELETE_ROWS_COMPRESSED_V1). prepl inflates them itself
-- (binlog/guard.go checks the declared size first); here they come from a
-- real server, small and large, DDL and DML, with a key change and NULLs.
SET GLOBAL log_bin_compress = ON;
SET GLOBAL log_bin_compress_min_len = 10;
CREATE DATABASE cb;
USE cb;
CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(200), b BLOB, d DECIMAL(20,6), j JSON) ENGINE=InnoDB;
INSERT INTO t VALUES (1, 1, 'one', NULL, 1.5, '{"k": 1}'), (2, 2, REPEAT('two ', 40), REPEAT(x'00ff', 500), -2.25, '[1, 2, 3]');
INSERT INTO t SELECT seq, seq % 7, CONCAT('row ', seq), REPEAT(CHAR(65 + seq % 26), seq), seq / 3, JSON_OBJECT('n', seq)
  FROM seq_3_to_300;
UPDATE t SET a = a + 100, s = CONCAT(s, ' updated') WHERE id % 3 = 0;
UPDATE t SET id = id + 1000 WHERE id BETWEEN 10 AND 20;
DELETE FROM t WHERE id % 11 = 0;
ALTER TABLE t ADD COLUMN e VARCHAR(30) DEFAULT 'added after compression' AFTER a;
UPDATE t SET e = NULL, b = NULL WHERE id < 5;
BEGIN;
INSERT INTO t (id, a, s) VALUES (5000, 1, 'in a transaction');
UPDATE t SET s = 'changed in the same transaction' WHERE id = 5000;
COMMIT;
SET GLOBAL log_bin_compress = OFF;
SET GLOBAL log_bin_compress_min_len = 256;
INSERT INTO t (id, a, s) VALUES (6000, 6, 'after compression off');
