-- triggers: 0-1-21 0-1-22
-- chunk 0
BEGIN;
-- chunk 1: BINLOG statements of GTID 0-1-21 (binlog.000001:4730)
BINLOG '...' -- table_map(47) write_rows(42) table_map(46) table_map(50) write_rows(47) write_rows(46)
-- chunk 2
INSERT INTO `tg`.`plain` (`id`,`v`) VALUES (2,2);
