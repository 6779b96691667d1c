-- Columns only the target has whose default is a function or an
-- expression: DEFAULT CURRENT_TIMESTAMP (an "arrived at" column a DBA
-- adds to a replica) and DEFAULT (v * 2). MariaDB's replica does not
-- evaluate them: it writes zeros ('0000-00-00 00:00:00') and NULL; prepl's
-- INSERT gets the target's clock and 2 * v. Left open: matching the
-- replica means writing a zero date into a column a DBA added to see
-- when rows arrive. MariaDB fixed the same gap for extra generated
-- columns as a bug (MDEV-11636, commit 2f5670d: extra persistent columns
-- on a replica are now computed from the replicated row), which argues
-- for prepl's behaviour here.
USE tn2;
INSERT INTO t VALUES (1, 1), (2, 2);
