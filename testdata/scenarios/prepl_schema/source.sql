-- The source is itself a target of a chained prepl: its prepl schema holds
-- that prepl's position. It must not be applied to this target, whose
-- prepl schema is its own.
CREATE DATABASE app;
CREATE TABLE app.t (id INT PRIMARY KEY, v INT);
INSERT INTO app.t VALUES (1, 1);
CREATE DATABASE IF NOT EXISTS prepl;
CREATE TABLE IF NOT EXISTS prepl.position (
  channel VARCHAR(64) NOT NULL,
  slot VARCHAR(128) NOT NULL,
  gtid_pos TEXT NOT NULL,
  file VARCHAR(512) NOT NULL,
  pos BIGINT UNSIGNED NOT NULL,
  last_gtid VARCHAR(128) NOT NULL,
  source_ts TIMESTAMP(6) NULL,
  pending_ddl VARCHAR(128) NOT NULL DEFAULT '',
  applied BIGINT UNSIGNED NOT NULL DEFAULT 0,
  floor_gtid TEXT NOT NULL,
  floor_file VARCHAR(512) NOT NULL DEFAULT '',
  floor_pos BIGINT UNSIGNED NOT NULL DEFAULT 0,
  updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (channel, slot)
) ENGINE=InnoDB;
BEGIN;
INSERT INTO app.t VALUES (2, 2);
INSERT INTO prepl.position (channel, slot, gtid_pos, file, pos, last_gtid, floor_gtid)
  VALUES ('default', '', '9-9-999', 'upstream-bin.000007', 4, '9-9-999', ''),
         ('replay', '', '9-9-999', 'upstream-bin.000007', 4, '9-9-999', '');
COMMIT;
UPDATE prepl.position SET pos = 1234 WHERE channel = 'default';
INSERT INTO app.t VALUES (3, 3);
CREATE TABLE prepl.extra (id INT PRIMARY KEY);
INSERT INTO prepl.extra VALUES (1);
INSERT INTO app.t VALUES (4, 4);
