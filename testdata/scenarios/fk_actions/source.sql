-- Cascading foreign keys beside non-cascading ones: a change that can
-- set off a cascade (a parent delete, an update of a referenced key) goes
-- in source order with the target's checks on, since its effects are not
-- in the binlog; inserts into such parents and updates of their other
-- columns do not, and compact. Cascades across units, chains of them, a
-- self-reference ON DELETE CASCADE, SET NULL, and keys that change.
CREATE DATABASE fka;
USE fka;
CREATE TABLE parent (id INT PRIMARY KEY, v INT);
CREATE TABLE child (id INT PRIMARY KEY, pid INT, v INT,
  FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE grandchild (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES child (id) ON DELETE CASCADE);
CREATE TABLE loose (id INT PRIMARY KEY, pid INT NULL, FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE SET NULL ON UPDATE SET NULL);
CREATE TABLE strict_child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id));
CREATE TABLE tree (id INT PRIMARY KEY, up INT NULL, v INT, FOREIGN KEY (up) REFERENCES tree (id) ON DELETE CASCADE);
INSERT INTO parent VALUES (1, 0), (2, 0), (3, 0), (4, 0), (5, 0);
INSERT INTO child VALUES (10, 1, 0), (11, 1, 0), (20, 2, 0), (30, 3, 0), (40, 4, 0);
INSERT INTO grandchild VALUES (100, 10), (101, 11), (200, 20), (400, 40);
INSERT INTO loose VALUES (1, 1), (2, 2), (3, NULL), (5, 5);
INSERT INTO strict_child VALUES (1, 5);
UPDATE parent SET v = v + 1 WHERE id = 1;
UPDATE parent SET v = v + 1 WHERE id = 1;
UPDATE child SET v = 7 WHERE id = 10;
DELETE FROM parent WHERE id = 1;
UPDATE parent SET v = 9 WHERE id = 2;
UPDATE parent SET id = 22 WHERE id = 2;
UPDATE child SET v = v + 1 WHERE pid = 22;
-- split
USE fka;
BEGIN;
DELETE FROM parent WHERE id = 22;
INSERT INTO parent VALUES (2, 1);
INSERT INTO child VALUES (21, 2, 0);
COMMIT;
INSERT INTO parent VALUES (6, 0);
INSERT INTO child VALUES (60, 6, 0);
INSERT INTO grandchild VALUES (600, 60);
UPDATE parent SET id = 66 WHERE id = 6;
DELETE FROM child WHERE id = 30;
DELETE FROM strict_child WHERE id = 1;
DELETE FROM parent WHERE id = 5;
INSERT INTO parent VALUES (5, 55);
INSERT INTO tree VALUES (1, NULL, 0);
INSERT INTO tree VALUES (2, 1, 0), (3, 2, 0), (4, 1, 0);
UPDATE tree SET v = 1 WHERE id = 3;
DELETE FROM tree WHERE id = 2;
UPDATE parent SET v = v + 1 WHERE id = 4;
DELETE FROM parent WHERE id = 4;
INSERT INTO parent VALUES (4, 44);
INSERT INTO child VALUES (41, 4, 0);
