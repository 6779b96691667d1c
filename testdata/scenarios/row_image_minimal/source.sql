-- binlog_row_image=MINIMAL and NOBLOB, as many production sources run:
-- a before image holds only the key, an after image only the columns the
-- statement changed (MINIMAL) or every column but the unchanged BLOBs and
-- TEXTs (NOBLOB). prepl must update and delete by the key alone, leave the
-- columns the image lacks as the target has them, and never compact a
-- partial image into a full-row write.
CREATE DATABASE ri;
USE ri;
CREATE TABLE pk (id INT PRIMARY KEY, a INT, b VARCHAR(20), t TEXT, bl BLOB, d INT DEFAULT 7) ENGINE=InnoDB;
CREATE TABLE uk (code VARCHAR(10) NOT NULL, a INT, t TEXT, UNIQUE KEY (code)) ENGINE=InnoDB;
CREATE TABLE nokey (a INT, b INT, t TEXT) ENGINE=InnoDB;
INSERT INTO pk VALUES (1, 1, 'one', 'text one', 'blob one', 1), (2, 2, 'two', 'text two', 'blob two', 2), (3, 3, 'three', NULL, NULL, 3);
INSERT INTO uk VALUES ('x', 1, 'tx'), ('y', 2, 'ty');
INSERT INTO nokey VALUES (1, 1, 'n1'), (1, 1, 'n1'), (2, 2, 'n2');

SET SESSION binlog_row_image = MINIMAL;
UPDATE pk SET a = a + 10 WHERE id = 1;
UPDATE pk SET b = 'TWO', t = CONCAT(t, '!') WHERE id = 2;
UPDATE pk SET a = a + 1, a = a + 1 WHERE id = 1;
-- Several changes of one row in one transaction and in consecutive ones:
-- compaction must merge partial images, not take the last as the row.
BEGIN;
UPDATE pk SET a = 100 WHERE id = 3;
UPDATE pk SET b = 'drei' WHERE id = 3;
UPDATE pk SET t = 'late text' WHERE id = 3;
COMMIT;
UPDATE pk SET bl = 'new blob' WHERE id = 3;
UPDATE pk SET d = DEFAULT WHERE id = 3;
INSERT INTO pk (id, a) VALUES (4, 4);
UPDATE pk SET b = 'four' WHERE id = 4;
UPDATE pk SET id = 40 WHERE id = 4;
DELETE FROM pk WHERE id = 2;
INSERT INTO pk (id, b) VALUES (2, 'two again');
UPDATE uk SET a = 10 WHERE code = 'x';
UPDATE uk SET code = 'z' WHERE code = 'y';
DELETE FROM uk WHERE code = 'x';
UPDATE nokey SET b = 9 WHERE a = 2;
DELETE FROM nokey WHERE a = 1 LIMIT 1;

SET SESSION binlog_row_image = NOBLOB;
UPDATE pk SET a = 5 WHERE id = 1;
UPDATE pk SET t = 'noblob text' WHERE id = 1;
UPDATE pk SET bl = 'noblob blob', a = 6 WHERE id = 40;
BEGIN;
UPDATE pk SET b = 'b1' WHERE id = 3;
UPDATE pk SET t = 't1' WHERE id = 3;
COMMIT;
DELETE FROM pk WHERE id = 1;
UPDATE uk SET t = 'tz' WHERE code = 'z';
SET SESSION binlog_row_image = FULL;
UPDATE pk SET a = 0;
