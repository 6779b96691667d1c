CREATE DATABASE gi;
USE gi;
CREATE TABLE t (
  id INT PRIMARY KEY,
  a INT,
  b INT,
  vsum INT AS (a + b) VIRTUAL,
  ssum INT AS (a + b) STORED,
  hidden VARCHAR(10) INVISIBLE DEFAULT 'h',
  vtxt VARCHAR(20) AS (CONCAT('a=', a)) VIRTUAL,
  KEY (vsum),
  UNIQUE KEY (ssum)
);
CREATE TABLE onlyhidden (id INT AUTO_INCREMENT PRIMARY KEY INVISIBLE, v INT);
INSERT INTO t (id, a, b) VALUES (1, 1, 2), (2, 10, 20);
INSERT INTO t (id, a, b, hidden) VALUES (3, 100, 200, 'set');
UPDATE t SET a = a + 1000 WHERE id = 1;
UPDATE t SET hidden = 'changed' WHERE id = 2;
DELETE FROM t WHERE vsum = 300;
INSERT INTO onlyhidden (id, v) VALUES (1, 1), (2, 2);
UPDATE onlyhidden SET v = 5 WHERE id = 2;
ALTER TABLE t ADD COLUMN late INT AS (a * 2) VIRTUAL;
UPDATE t SET b = b + 1;
