-- An update of a row leaves the target's own ON UPDATE CURRENT_TIMESTAMP
-- column alone (target.sql), as MariaDB's replica does: the table has
-- columns the source lacks, which nothing but an insert's defaults may
-- write. prepl's UPDATE let the server set it to the target's clock.
USE tx;
SET TIMESTAMP = UNIX_TIMESTAMP('2001-02-03 04:05:06.25');
INSERT INTO t VALUES (1, 1), (2, 2);
SET TIMESTAMP = UNIX_TIMESTAMP('2002-02-03 04:05:06.5');
UPDATE t SET v = 20 WHERE id = 2;
BEGIN;
UPDATE t SET v = 10 WHERE id = 1;
UPDATE t SET v = 11 WHERE id = 1;
COMMIT;
SET TIMESTAMP = DEFAULT;
