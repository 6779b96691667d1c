-- MariaDB compressed columns (COMPRESSED): the binlog gives them types of
-- their own (VARCHAR_COMPRESSED, BLOB_COMPRESSED) holding a header byte
-- and, past a few bytes, a deflate stream. go-mysql knows neither type
-- and misreads the metadata of every column after one; prepl used to
-- stop at the table map (and before that, to call the binlog corrupted).
-- It reads the metadata itself and inflates the values. The columns
-- after the compressed ones (DECIMAL, DATETIME(6), a latin1 VARCHAR)
-- would show misplaced metadata or charsets; the values are stored as
-- they are (short ones), raw deflate (the default) and zlib-wrapped
-- (column_compression_zlib_wrap), empty and NULL.
CREATE DATABASE cc;
USE cc;
CREATE TABLE c (id INT PRIMARY KEY, v VARCHAR(200) COMPRESSED, b BLOB COMPRESSED, t TEXT COMPRESSED CHARACTER SET utf8mb4,
  price DECIMAL(10,3), at DATETIME(6), l VARCHAR(20) CHARACTER SET latin1, m MEDIUMBLOB COMPRESSED) ENGINE=InnoDB;
INSERT INTO c VALUES (1, REPEAT('abc', 50), REPEAT(x'00ff', 300), REPEAT('é', 100), 12.345, '2001-02-03 04:05:06.123456', 'café', NULL),
  (2, 'short', x'01', '', 1.5, '2001-02-03 04:05:06', 'x', ''), (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE c SET v = 'changed', t = REPEAT('ü', 500) WHERE id = 1;
DELETE FROM c WHERE id = 2;
INSERT INTO c (id, m, l) VALUES (4, REPEAT('0123456789', 20000), 'naïve');
SET SESSION column_compression_zlib_wrap = ON;
INSERT INTO c VALUES (5, REPEAT('wrapped ', 20), REPEAT(x'0102', 500), REPEAT('ß', 300), -1.001, '1999-12-31 23:59:59.5', 'ÿ', REPEAT('z', 70000));
UPDATE c SET m = CONCAT(m, 'tail'), price = price + 1 WHERE id IN (4, 5);
