-- Temporary tables are not in a row-based binlog; what they put in real
-- tables is.
CREATE DATABASE tm;
USE tm;
CREATE TABLE real_t (id INT PRIMARY KEY, v INT);
CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v INT);
INSERT INTO tmp VALUES (1, 10), (2, 20), (3, 30);
INSERT INTO real_t SELECT * FROM tmp;
UPDATE tmp SET v = v * 100;
UPDATE real_t JOIN tmp USING (id) SET real_t.v = tmp.v WHERE id > 1;
CREATE TEMPORARY TABLE real_t (shadow INT);
INSERT INTO real_t VALUES (1);
DROP TEMPORARY TABLE real_t;
DELETE FROM real_t WHERE id = 1;
DROP TEMPORARY TABLE tmp;
CREATE TEMPORARY TABLE tmp2 AS SELECT id, v + 1 AS v FROM real_t;
INSERT INTO real_t SELECT id + 10, v FROM tmp2;
