-- The target lacks the source's last column.
ALTER TABLE sm.t DROP COLUMN extra;
