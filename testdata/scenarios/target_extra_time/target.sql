-- A column only the target has, set ON UPDATE CURRENT_TIMESTAMP: an
-- update from the binlog does not touch it, as on a replica.
ALTER TABLE tx.t ADD COLUMN changed DATETIME(6) NULL DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP(6);
