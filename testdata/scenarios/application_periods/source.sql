-- Application-time periods (MariaDB 10.5+): a unique key WITHOUT OVERLAPS
-- (rows of one id may not overlap in time, which no exact key value
-- says), and UPDATE/DELETE FOR PORTION OF, which split rows in two.
CREATE DATABASE ap;
USE ap;
CREATE TABLE r (id INT, s DATE, e DATE, v INT, PERIOD FOR p(s, e), UNIQUE KEY (id, p WITHOUT OVERLAPS)) ENGINE=InnoDB;
INSERT INTO r VALUES (1, '2020-01-01', '2020-06-01', 1);
DELETE FROM r WHERE id = 1;
INSERT INTO r VALUES (1, '2020-03-01', '2020-09-01', 2);
UPDATE r FOR PORTION OF p FROM '2020-04-01' TO '2020-05-01' SET v = 3 WHERE id = 1;
DELETE FROM r FOR PORTION OF p FROM '2020-06-01' TO '2020-07-01' WHERE id = 1;
UPDATE r SET s = '2020-02-01' WHERE id = 1 AND s = '2020-03-01';
INSERT INTO r VALUES (2, '2021-01-01', '2021-02-01', 1);
UPDATE r SET e = '2021-03-01' WHERE id = 2;
DELETE FROM r WHERE id = 2;
INSERT INTO r VALUES (2, '2021-02-15', '2021-04-01', 5);
