-- Commit units big enough (32 rows or more) that their compacted inserts
-- and updates go to a MariaDB target as rows events built from the
-- binlog's own images (mysql/rowevents.go), and transactions of many
-- changes to a key-less table as the binlog's rows events: the column
-- types of real schemas with extreme values and NULLs, a foreign key, a
-- hot row updated by every transaction, rows deleted and inserted again,
-- a key that changes, identical rows in the key-less table.
CREATE DATABASE rev;
USE rev;
CREATE TABLE acct (id INT PRIMARY KEY, bal DECIMAL(14,4) NOT NULL, name VARCHAR(30), code CHAR(6), at DATETIME(6),
  ts TIMESTAMP(3) NULL, d DATE, f FLOAT, g DOUBLE, u BIGINT UNSIGNED, t TINYINT, s SMALLINT UNSIGNED, m MEDIUMINT,
  y YEAR, note TEXT, bin BLOB, vb VARBINARY(8));
CREATE TABLE entry (acct INT NOT NULL, n INT NOT NULL, amt DECIMAL(10,2), memo VARCHAR(100), PRIMARY KEY (acct, n),
  FOREIGN KEY (acct) REFERENCES acct (id));
CREATE TABLE log (a INT, b VARCHAR(20), c DECIMAL(8,2), KEY (a));
INSERT INTO acct (id, bal, name) VALUES (1, 0, 'hot'), (2, 0, 'warm');
DELIMITER //
CREATE PROCEDURE work(first INT, k INT)
BEGIN
  DECLARE i INT DEFAULT first;
  WHILE i < first + k DO
    START TRANSACTION;
    UPDATE acct SET bal = bal + 1.25, ts = '2026-01-01 00:00:00.123' + INTERVAL i SECOND WHERE id = 1;
    INSERT INTO acct VALUES (100 + i, i * 0.5, CONCAT('n', i), 'abc', '2026-01-02 03:04:05.678901' + INTERVAL i MINUTE,
      NULL, '2026-02-03', 1.5 + i, -2.25e100, 18446744073709551615 - i, -128 + i, 65535 - i, -8388608 + i, 2000 + i,
      REPEAT('x', 10 * i), UNHEX('00FF10'), IF(i % 2 = 0, NULL, 'vb'));
    INSERT INTO entry VALUES (100 + i, 1, i, 'first'), (1, 1000 + i, -i, NULL);
    UPDATE acct SET note = CONCAT(IFNULL(note, ''), i), bal = bal - 0.0001 WHERE id = 2;
    COMMIT;
    SET i = i + 1;
  END WHILE;
END//
DELIMITER ;
CALL work(0, 60);
-- A row deleted and inserted again, a key that changes, in one
-- transaction among big units.
BEGIN;
DELETE FROM entry WHERE acct IN (110, 111);
DELETE FROM acct WHERE id = 110;
INSERT INTO acct (id, bal, name) VALUES (110, 7, 'again');
UPDATE acct SET id = 500, code = 'moved' WHERE id = 111;
COMMIT;
CALL work(60, 40);
-- Key-less: many inserts, deletes and updates per transaction (identical
-- rows among them), then a few.
INSERT INTO log SELECT seq % 40, CONCAT('r', seq % 7), seq / 3 FROM seq_1_to_400;
DELETE FROM log WHERE a < 15;
UPDATE log SET b = 'u' WHERE a BETWEEN 15 AND 25;
DELETE FROM log WHERE a = 30 LIMIT 2;
CALL work(100, 40);
