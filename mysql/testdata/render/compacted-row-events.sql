-- compacted-row-events: 0-1-15 0-1-16 0-1-17
-- chunk 0
BEGIN;
DELETE FROM `g`.`t` WHERE `id` IN (4);
-- chunk 1: BINLOG statements of GTID 0-1-17 (binlog.000001:3643)
BINLOG '...' -- table_map(45) write_rows(44) update_rows(79)
