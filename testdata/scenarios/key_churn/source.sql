-- Key values that move between rows, the hardest input for compaction (a
-- unit's net effect per table as multi-row statements) and for the
-- dependency keys: unique values swapped and rotated between rows inside
-- one transaction and across transactions of one unit, primary keys
-- shifted up a chain, a row deleted and its key reused by another row, a
-- unique key on a nullable column (NULLs do not collide), a composite
-- unique key, and case/accent-insensitive unique values that collide
-- under the column's collation.
CREATE DATABASE kc;
USE kc;
CREATE TABLE u (id INT PRIMARY KEY, code INT NOT NULL, note VARCHAR(20), UNIQUE KEY (code)) ENGINE=InnoDB;
CREATE TABLE c (a INT NOT NULL, b INT NOT NULL, v INT, n INT NULL, PRIMARY KEY (a, b), UNIQUE KEY (v, a), UNIQUE KEY (n)) ENGINE=InnoDB;
CREATE TABLE s (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_unicode_ci, UNIQUE KEY (name)) ENGINE=InnoDB;
INSERT INTO u VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c'), (4, 40, 'd');
INSERT INTO c VALUES (1, 1, 1, NULL), (1, 2, 2, NULL), (2, 1, 1, 5);
INSERT INTO s VALUES (1, 'Éclair'), (2, 'tart');

-- A swap of two unique values in one transaction (through a free value).
BEGIN;
UPDATE u SET code = -1 WHERE id = 1;
UPDATE u SET code = 10 WHERE id = 2;
UPDATE u SET code = 20 WHERE id = 1;
COMMIT;
-- A rotation across three transactions that may share a commit unit.
UPDATE u SET code = 0 WHERE id = 3;
UPDATE u SET code = 30 WHERE id = 4;
UPDATE u SET code = 40 WHERE id = 3;
-- Primary keys shifted up a chain (highest first), then back down.
UPDATE u SET id = id + 1 WHERE id >= 3 ORDER BY id DESC;
UPDATE u SET id = id - 1 WHERE id >= 4 ORDER BY id ASC;
-- A row deleted and its primary key and unique value taken by a new row,
-- in one transaction and in consecutive ones.
BEGIN;
DELETE FROM u WHERE id = 2;
INSERT INTO u VALUES (2, 10, 'new two');
COMMIT;
DELETE FROM u WHERE id = 1;
INSERT INTO u VALUES (5, 20, 'took 1''s code');
INSERT INTO u VALUES (1, 50, 'back');
-- Composite keys: the unique (v, a) value moves between rows; NULLs in a
-- unique key never collide, and one becomes a value another row had.
UPDATE c SET v = 3 WHERE a = 1 AND b = 1;
UPDATE c SET v = 1 WHERE a = 1 AND b = 2;
UPDATE c SET n = NULL WHERE a = 2;
UPDATE c SET n = 5 WHERE a = 1 AND b = 1;
INSERT INTO c VALUES (3, 3, 3, NULL), (3, 4, 4, NULL);
UPDATE c SET a = 4 WHERE a = 3;
-- Collation: 'eclair' collides with 'Éclair' under utf8mb4_unicode_ci, so
-- the old row must be gone first.
DELETE FROM s WHERE id = 1;
INSERT INTO s VALUES (3, 'eclair');
UPDATE s SET name = 'TART ' WHERE id = 2;
UPDATE s SET name = 'Éclair', id = 1 WHERE id = 3;
-- Many small transactions on the same few keys, so that units hold
-- several changes of one row.
DELIMITER ;;
CREATE PROCEDURE churn()
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < 60 DO
    UPDATE u SET code = code + 1000 WHERE id = 1 + i % 4;
    DELETE FROM c WHERE a = 4 AND b = 3 + i % 2;
    INSERT INTO c VALUES (4, 3 + i % 2, 100 + i, NULL);
    SET i = i + 1;
  END WHILE;
END;;
DELIMITER ;
CALL churn();
DROP PROCEDURE churn;
