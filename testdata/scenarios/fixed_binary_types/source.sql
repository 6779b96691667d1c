-- MariaDB's fixed-size binary types (UUID, INET6, INET4) and BINARY(n):
-- the binlog stores their bytes with trailing zero bytes stripped, as it
-- does for BINARY(n); the replica pads them back. Values that end in zero
-- bytes (an IPv6 network address, 0.0.0.0, a UUID ending in 00), and
-- time-based UUIDs (which MariaDB stores with their segments swapped),
-- each left as inserted, and as keys.
CREATE DATABASE fb;
USE fb;
CREATE TABLE u (id INT PRIMARY KEY, uu UUID, ip INET6, b BINARY(4), UNIQUE KEY (uu)) ENGINE=InnoDB;
INSERT INTO u VALUES
 (1, '123e4567-e89b-12d3-a456-426655440000', '2001:db8::', x'01020000'),
 (2, '123e4567-e89b-12d3-a456-426655440001', '::', x'00000000'),
 (3, '00000000-0000-0000-0000-000000000000', '::ffff:10.0.0.0', x'00'),
 (4, 'ffffffff-ffff-ffff-ffff-ffffffffff00', 'fe80::1:0', NULL),
 (5, NULL, NULL, x'ff');
UPDATE u SET ip = '2001:db8:1::' WHERE uu = '123e4567-e89b-12d3-a456-426655440000';
DELETE FROM u WHERE uu = '00000000-0000-0000-0000-000000000000';
CREATE TABLE k (uu UUID PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO k VALUES ('6ccd780c-baba-1026-9564-5b8c656024db', 1), ('6ccd780c-baba-1026-9564-5b8c65602400', 2);
UPDATE k SET v = v + 10;
DELETE FROM k WHERE v = 11;
CREATE TABLE i4 (id INT PRIMARY KEY, a INET4) ENGINE=InnoDB;
INSERT INTO i4 VALUES (1, '10.0.0.0'), (2, '0.0.0.0'), (3, '192.168.1.1');
UPDATE i4 SET a = '10.1.0.0' WHERE id = 3;
