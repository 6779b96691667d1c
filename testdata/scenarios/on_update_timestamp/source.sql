-- Columns the server sets itself on the target if the statement does not:
-- TIMESTAMP/DATETIME ... ON UPDATE CURRENT_TIMESTAMP and DEFAULT
-- CURRENT_TIMESTAMP, with full and minimal row images, the source's clock
-- set far in the past so that the target's own "now" would show. The rows
-- must hold the source's values, not the target's clock.
CREATE DATABASE ou;
USE ou;
CREATE TABLE t (id INT PRIMARY KEY, v INT,
  created TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  changed TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  dchanged DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)) ENGINE=InnoDB;
SET TIMESTAMP = UNIX_TIMESTAMP('2001-02-03 04:05:06');
INSERT INTO t (id, v) VALUES (1, 1), (2, 2), (3, 3);
SET TIMESTAMP = UNIX_TIMESTAMP('2002-02-03 04:05:06');
UPDATE t SET v = v + 10 WHERE id = 1;
SET SESSION binlog_row_image = MINIMAL;
SET TIMESTAMP = UNIX_TIMESTAMP('2003-02-03 04:05:06');
UPDATE t SET v = v + 20 WHERE id = 2;
UPDATE t SET v = v WHERE id = 3;
SET TIMESTAMP = UNIX_TIMESTAMP('2004-02-03 04:05:06');
INSERT INTO t (id, v) VALUES (4, 4);
UPDATE t SET v = 40, changed = changed WHERE id = 4;
SET SESSION binlog_row_image = NOBLOB;
SET TIMESTAMP = UNIX_TIMESTAMP('2005-02-03 04:05:06');
UPDATE t SET v = 0 WHERE id IN (1, 3);
SET TIMESTAMP = DEFAULT;
