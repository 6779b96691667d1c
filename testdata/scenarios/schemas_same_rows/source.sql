-- Two schemas whose transactions touch the same rows: a cross-schema
-- foreign key, multi-schema updates and a schema writing into the other.
CREATE DATABASE s1;
CREATE DATABASE s2;
CREATE TABLE s1.parent (id INT PRIMARY KEY, v INT);
CREATE TABLE s2.child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES s1.parent (id) ON DELETE CASCADE);
CREATE TABLE s2.counter (id INT PRIMARY KEY, n INT);
INSERT INTO s1.parent VALUES (1, 1);
USE s2;
INSERT INTO child VALUES (10, 1);
INSERT INTO counter VALUES (1, 0);
USE s1;
UPDATE s2.counter SET n = n + 1;
INSERT INTO parent VALUES (2, 2);
USE s2;
INSERT INTO child VALUES (20, 2);
UPDATE counter SET n = n * 5;
USE s1;
UPDATE parent p JOIN s2.counter c ON c.id = p.id SET p.v = c.n, c.n = c.n + 1;
DELETE FROM parent WHERE id = 1;
USE s2;
UPDATE counter SET n = n + 100;
INSERT INTO child VALUES (11, 2);
