-- The target's columns are narrower than the source's (target.sql): a
-- value that does not fit must stop the run, never be cut to fit.
-- MariaDB's replica refuses the table's first rows event (error 1677,
-- slave_type_conversions empty); prepl, which converts by SQL, stops on
-- the first value the target cannot hold exactly (strict sql_mode), here
-- in the same transaction. Without strict mode it stored 'longe' and 127
-- and exited 0.
USE tn;
INSERT INTO t VALUES (1, 'longer than 5', 1000);
INSERT INTO t VALUES (2, 'short', 2);
