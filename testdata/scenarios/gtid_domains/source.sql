-- Two GTID domains write the same rows: mode domain applies them in
-- parallel across domains but must honour the rows they share.
CREATE DATABASE gd;
CREATE TABLE gd.t (id INT PRIMARY KEY, v VARCHAR(60));
CREATE TABLE gd.u (id INT PRIMARY KEY, n INT);
-- split
SET SESSION gtid_domain_id = 1;
INSERT INTO gd.t VALUES (1, 'd1'), (2, 'd1');
INSERT INTO gd.u VALUES (1, 0);
-- split
SET SESSION gtid_domain_id = 2;
UPDATE gd.t SET v = CONCAT(v, '+d2') WHERE id = 1;
INSERT INTO gd.t VALUES (3, 'd2');
UPDATE gd.u SET n = n + 1;
-- split
SET SESSION gtid_domain_id = 1;
UPDATE gd.t SET v = CONCAT(v, '+d1') WHERE id IN (1, 3);
UPDATE gd.u SET n = n * 10;
DELETE FROM gd.t WHERE id = 2;
-- split
SET SESSION gtid_domain_id = 2;
INSERT INTO gd.t VALUES (2, 'd2 again');
UPDATE gd.u SET n = n + 2;
-- split
-- Rounds of rows each domain creates and the other changes at once.
SET SESSION gtid_domain_id = 1;
INSERT INTO gd.t VALUES (10, 'd1');
SET SESSION gtid_domain_id = 2;
UPDATE gd.t SET v = 'd2' WHERE id = 10;
INSERT INTO gd.t VALUES (11, 'd2');
SET SESSION gtid_domain_id = 1;
UPDATE gd.t SET v = 'd1' WHERE id = 11;
DELETE FROM gd.t WHERE id = 10;
SET SESSION gtid_domain_id = 2;
INSERT INTO gd.t VALUES (10, 'd2 again');
SET SESSION gtid_domain_id = 1;
INSERT INTO gd.t VALUES (12, 'd1');
SET SESSION gtid_domain_id = 2;
UPDATE gd.t SET v = 'd2' WHERE id = 12;
SET SESSION gtid_domain_id = 1;
UPDATE gd.u SET n = n + 1000;
