-- MariaDB compressed columns (COMPRESSED): the binlog gives them types of
-- their own (VARCHAR_COMPRESSED, BLOB_COMPRESSED) holding a header byte
-- and a zlib stream. MariaDB's replica applies them. prepl does not read
-- them yet: it stops at the table's first table map, naming the table
-- and column (it used to call the binlog corrupted).
CREATE DATABASE cc;
USE cc;
CREATE TABLE c (id INT PRIMARY KEY, v VARCHAR(200) COMPRESSED, b BLOB COMPRESSED, t TEXT COMPRESSED CHARACTER SET utf8mb4) ENGINE=InnoDB;
INSERT INTO c VALUES (1, REPEAT('abc', 50), REPEAT(x'00ff', 300), REPEAT('é', 100)), (2, 'short', x'01', ''), (3, NULL, NULL, NULL);
UPDATE c SET v = 'changed', t = REPEAT('ü', 500) WHERE id = 1;
DELETE FROM c WHERE id = 2;
