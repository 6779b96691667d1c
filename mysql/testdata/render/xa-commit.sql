-- xa-commit: 0-1-24
-- chunk 0
BEGIN;
-- chunk 1: XA COMMIT X'7831',X'',1: the events stored at its XA PREPARE, by GTID 0-1-24 (binlog.000001:5733)
