-- Rows of a MiB or two in a narrow table: a 1.5 MiB LONGBLOB of arbitrary
-- bytes and a 512 KiB LONGTEXT that needs escaping, inserted, updated in
-- place (before and after images in one rows event) and deleted, and
-- several such rows in one transaction. The event guard once took any
-- rows event of such a table over about 1.2 MB for damage (it bounded
-- the rows by their null bitmaps alone: millions of NULL rows) and
-- stopped on a valid binlog.
CREATE DATABASE lv;
USE lv;
CREATE TABLE b (id INT PRIMARY KEY, data LONGBLOB, txt LONGTEXT) ENGINE=InnoDB;
INSERT INTO b VALUES (1, REPEAT(UNHEX('00FF27005C'), 3 * 512 * 1024 / 5), REPEAT('it''s \\ ', 512 * 1024 / 8));
UPDATE b SET data = CONCAT(data, 'tail') WHERE id = 1;
BEGIN;
INSERT INTO b VALUES (2, REPEAT('x', 1024 * 1024), NULL), (3, REPEAT('y', 1024 * 1024), NULL);
UPDATE b SET txt = REPEAT('z', 512 * 1024) WHERE id = 2;
COMMIT;
DELETE FROM b WHERE id = 3;
UPDATE b SET id = 10 WHERE id = 1;
