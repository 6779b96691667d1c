-- A CHECK constraint only the target has (target.sql), which source rows
-- break: MariaDB's replica applies rows events without evaluating CHECK
-- constraints, and so must prepl (on MariaDB targets).
USE tc;
INSERT INTO t VALUES (1, 1);
INSERT INTO t VALUES (2, 200);
UPDATE t SET v = 300 WHERE id = 1;
INSERT INTO t VALUES (3, 3);
