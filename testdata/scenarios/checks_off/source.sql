-- Sessions that turn checks off, as bulk loads and schema tools do: with
-- foreign_key_checks=0 a child row may name a parent that does not exist
-- (yet), and a parent may go with its children left; with
-- unique_checks=0 InnoDB may skip secondary-index uniqueness work. Rows
-- events carry the session's flags; the replica applies them with the
-- same checks off, and so must prepl, or it refuses rows the source took.
CREATE DATABASE co;
USE co;
CREATE TABLE parent (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE child (id INT PRIMARY KEY, pid INT, v INT, UNIQUE KEY (v),
  CONSTRAINT fk FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE) ENGINE=InnoDB;
INSERT INTO parent VALUES (1, 1);
INSERT INTO child VALUES (1, 1, 1);
SET SESSION foreign_key_checks = 0;
INSERT INTO child VALUES (2, 99, 2), (3, 98, 3);
DELETE FROM parent WHERE id = 1;
UPDATE child SET pid = 97 WHERE id = 1;
SET SESSION foreign_key_checks = 1;
INSERT INTO parent VALUES (99, 99);
UPDATE child SET v = 20 WHERE id = 2;
SET SESSION unique_checks = 0;
INSERT INTO child VALUES (4, 99, 4);
SET SESSION unique_checks = 1, foreign_key_checks = 0;
BEGIN;
INSERT INTO child VALUES (5, 50, 5);
SET SESSION foreign_key_checks = 1;
INSERT INTO parent VALUES (50, 50);
COMMIT;
DELETE FROM parent WHERE id = 99;

-- check_constraint_checks = 0 (MariaDB): rows a CHECK refuses; the
-- replica applies rows events without evaluating CHECK constraints.
CREATE TABLE ck (id INT PRIMARY KEY, v INT, CONSTRAINT v_positive CHECK (v > 0));
INSERT INTO ck VALUES (1, 1);
SET SESSION check_constraint_checks = 0;
INSERT INTO ck VALUES (2, -2);
UPDATE ck SET v = -1 WHERE id = 1;
SET SESSION check_constraint_checks = 1;
INSERT INTO ck VALUES (3, 3);
