-- Only the targets have these columns, with values of their own in the
-- rows that were there before the binlog: an update keeps them, a row
-- deleted and inserted again gets the defaults.
-- A NOT NULL column without a default gets its type's implicit one (0, '')
-- on insert, as on a replica, though prepl applies rows in strict mode.
ALTER TABLE te.t ADD COLUMN extra INT NOT NULL DEFAULT 7, ADD COLUMN note VARCHAR(10) DEFAULT 'target',
  ADD COLUMN tag INT NULL, ADD UNIQUE KEY (tag), ADD COLUMN nn INT NOT NULL, ADD COLUMN ns VARCHAR(5) NOT NULL;
ALTER TABLE te.k ADD COLUMN k2 INT DEFAULT 0;
UPDATE te.t SET extra = 90 + id, note = 'pre', tag = id;
