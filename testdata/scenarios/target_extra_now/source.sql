-- A column only the target has, DEFAULT CURRENT_TIMESTAMP (an "arrived
-- at" column a DBA adds to a replica): MariaDB's replica fills it with
-- zeros ('0000-00-00 00:00:00'), not with any clock; prepl's INSERT gets
-- the target's clock. Left open: matching the replica means writing a
-- zero date into a column a DBA added to see when rows arrive.
USE tn2;
INSERT INTO t VALUES (1, 1), (2, 2);
