-- The source changes binlog_checksum while it runs, as a DBA may: each
-- change rotates the binlog, so the stream holds files with CRC32, then
-- without a checksum (NONE), then with CRC32 again. prepl reads the
-- checksum algorithm of each file from its format description (replay) and
-- of the stream from the source (replicate); an event's last four bytes
-- are data in a NONE file and a checksum in the others.
CREATE DATABASE cs;
USE cs;
CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40), n INT) ENGINE=InnoDB;
INSERT INTO t VALUES (1, 'crc32 file', 1), (2, 'crc32 file', 2);
SET GLOBAL binlog_checksum = NONE;
INSERT INTO t VALUES (3, 'no checksum', 3), (4, 'no checksum', 4);
UPDATE t SET n = n * 10, v = CONCAT(v, ' +') WHERE id IN (1, 3);
ALTER TABLE t ADD COLUMN w INT DEFAULT 5;
DELETE FROM t WHERE id = 2;
BEGIN;
INSERT INTO t (id, v, n) VALUES (5, 'in a transaction, no checksum', 5);
UPDATE t SET w = 6 WHERE id = 5;
COMMIT;
SET GLOBAL binlog_checksum = CRC32;
INSERT INTO t (id, v, n) VALUES (6, 'crc32 again', 6);
UPDATE t SET w = NULL WHERE id = 4;
