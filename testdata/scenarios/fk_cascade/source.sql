-- InnoDB cascades are not in a row-based binlog: the target's foreign
-- keys must redo them.
CREATE DATABASE fk;
USE fk;
CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(10));
CREATE TABLE child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE grandchild (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES child (id) ON DELETE CASCADE);
CREATE TABLE loose (id INT PRIMARY KEY, pid INT NULL, FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE SET NULL ON UPDATE SET NULL);
INSERT INTO parent VALUES (1, 'p1'), (2, 'p2'), (3, 'p3');
INSERT INTO child VALUES (10, 1), (11, 1), (20, 2), (30, 3);
INSERT INTO grandchild VALUES (100, 10), (101, 11), (200, 20);
INSERT INTO loose VALUES (1, 1), (2, 2), (3, NULL);
DELETE FROM parent WHERE id = 1;
UPDATE parent SET id = 22 WHERE id = 2;
BEGIN;
DELETE FROM parent WHERE id = 22;
INSERT INTO parent VALUES (2, 'p2 again');
INSERT INTO child VALUES (21, 2);
COMMIT;
DELETE FROM child WHERE id = 30;
