-- Primary and unique keys of every kind of type: an update or delete finds
-- its row by the key's value, so the literal prepl writes must compare
-- equal to the stored value (a FLOAT or DOUBLE key, fractions of seconds,
-- BIT, ENUM and SET, binary with trailing zero bytes, DECIMAL, YEAR).
CREATE DATABASE kt;
USE kt;
CREATE TABLE f (k FLOAT PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE d (k DOUBLE PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE dc (k DECIMAL(20,10) PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE tm (k DATETIME(6) PRIMARY KEY, t TIME(3), ts TIMESTAMP(4) NULL, y YEAR, v INT, UNIQUE KEY (t), UNIQUE KEY (ts), UNIQUE KEY (y)) ENGINE=InnoDB;
CREATE TABLE bt (k BIT(10) PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE es (e ENUM('a', 'b', 'c'), s SET('x', 'y'), v INT, PRIMARY KEY (e, s)) ENGINE=InnoDB;
CREATE TABLE bn (k BINARY(8) PRIMARY KEY, vb VARBINARY(8), v INT, UNIQUE KEY (vb)) ENGINE=InnoDB;
INSERT INTO f VALUES (0.1, 1), (3.4028234e38, 2), (-1.17549435e-38, 3), (1e-10, 4);
UPDATE f SET v = v + 10;
DELETE FROM f WHERE v = 12;
UPDATE f SET k = 0.2 WHERE v = 11;
INSERT INTO d VALUES (0.1, 1), (1.7976931348623157e308, 2), (4.9e-324, 3), (-0.0, 4), (1/3, 5);
UPDATE d SET v = v + 10;
DELETE FROM d WHERE v = 13;
UPDATE d SET k = 2/3 WHERE v = 15;
INSERT INTO dc VALUES (0.0000000001, 1), (-9999999999.9999999999, 2), (0, 3);
UPDATE dc SET v = v + 10;
DELETE FROM dc WHERE v = 12;
INSERT INTO tm VALUES ('2024-02-29 23:59:59.999999', '-838:59:58.999', '2038-01-19 03:14:07.9999', 2155, 1),
  ('1000-01-01 00:00:00.000001', '00:00:00.001', '1970-01-01 00:00:01.0001', 1901, 2);
UPDATE tm SET v = v + 10;
UPDATE tm SET k = '2024-02-29 23:59:59.999998' WHERE v = 11;
DELETE FROM tm WHERE v = 12;
INSERT INTO bt VALUES (b'0000000001', 1), (b'1111111111', 2), (b'1000000000', 3);
UPDATE bt SET v = v + 10;
DELETE FROM bt WHERE k = b'1111111111';
UPDATE bt SET k = b'0000000010' WHERE v = 11;
INSERT INTO es VALUES ('a', '', 1), ('b', 'x,y', 2), ('c', 'y', 3);
UPDATE es SET v = v + 10;
DELETE FROM es WHERE e = 'b';
UPDATE es SET s = 'x' WHERE e = 'a';
INSERT INTO bn VALUES (X'00', X'00', 1), (X'0100000000000000', X'01', 2), ('ab', 'ab', 3);
UPDATE bn SET v = v + 10;
DELETE FROM bn WHERE v = 12;
UPDATE bn SET vb = X'0000' WHERE v = 11;
