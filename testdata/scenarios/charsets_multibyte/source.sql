-- Column charsets whose bytes are not ASCII-safe: in GBK, SJIS and BIG5
-- the second byte of many characters is 0x5C (a backslash), so escaping
-- byte by byte inside a literal of that charset would break the
-- character; UCS2, UTF16 and UTF32 put 0x00, 0x27 and 0x5C bytes inside
-- characters. Keys in these charsets too.
SET NAMES utf8mb4;
CREATE DATABASE cs;
USE cs;
CREATE TABLE mb (
  id INT PRIMARY KEY,
  g VARCHAR(20) CHARACTER SET gbk,
  s VARCHAR(20) CHARACTER SET sjis,
  b VARCHAR(20) CHARACTER SET big5,
  u2 VARCHAR(20) CHARACTER SET ucs2,
  u16 VARCHAR(20) CHARACTER SET utf16,
  u16le VARCHAR(20) CHARACTER SET utf16le,
  u32 VARCHAR(20) CHARACTER SET utf32,
  l1 VARCHAR(20) CHARACTER SET latin1,
  cp VARCHAR(20) CHARACTER SET cp1251
) ENGINE=InnoDB;
CREATE TABLE gk (k VARCHAR(10) CHARACTER SET gbk PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE sk (k VARCHAR(10) CHARACTER SET sjis NOT NULL, v INT, UNIQUE KEY (k)) ENGINE=InnoDB;
CREATE TABLE uk (k VARCHAR(10) CHARACTER SET utf16 PRIMARY KEY, v INT) ENGINE=InnoDB;
INSERT INTO mb VALUES
 (1, '表ソ功乗\'"\\', '表ソ能十', '功許蓋', 'Ωµ\'"\\', '😀\'"\\ab', 'é\'"\\', '𝄞\'"\\', 'Ñ\'"\\', 'Жж\'"\\'),
 (2, '', '', '', '', '', '', '', '', ''),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
UPDATE mb SET g = CONCAT(g, '表'), s = CONCAT(s, 'ソ'), b = CONCAT(b, '功'), u16 = CONCAT(u16, '\0'), u32 = 'x' WHERE id = 1;
UPDATE mb SET id = 10 WHERE id = 1;
DELETE FROM mb WHERE id = 2;
INSERT INTO gk VALUES ('表', 1), ('ソ', 2), ('a\\b', 3);
UPDATE gk SET v = v + 10 WHERE k = '表';
UPDATE gk SET k = '功' WHERE k = 'ソ';
DELETE FROM gk WHERE k = 'a\\b';
INSERT INTO sk VALUES ('表', 1), ('ソ', 2);
UPDATE sk SET v = 20 WHERE k = 'ソ';
DELETE FROM sk WHERE k = '表';
INSERT INTO uk VALUES ('😀', 1), ('\'', 2), ('\\', 3);
UPDATE uk SET v = 9 WHERE k = '\'';
UPDATE uk SET k = '𝄞' WHERE k = '😀';
DELETE FROM uk WHERE k = '\\';
