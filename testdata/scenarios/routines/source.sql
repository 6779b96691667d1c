-- Stored routines that write rows: the binlog holds the rows they wrote
-- (row format), not the CALL, so values the routine drew (UUID(), RAND(),
-- NOW(6)) must reach the target as drawn; a procedure that commits
-- inside its loop is many transactions; dynamic SQL runs DDL mid-stream;
-- an exit handler rolls back what its transaction did.
CREATE DATABASE rt;
USE rt;
CREATE TABLE t (id INT PRIMARY KEY, u CHAR(36), r DOUBLE, ts DATETIME(6), v INT) ENGINE=InnoDB;
CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(100)) ENGINE=InnoDB;
DELIMITER ;;
CREATE FUNCTION bump(x INT) RETURNS INT NOT DETERMINISTIC MODIFIES SQL DATA
BEGIN
  INSERT INTO log (msg) VALUES (CONCAT('bump ', x));
  RETURN x + FLOOR(RAND() * 1000);
END;;
CREATE PROCEDURE fill(IN n INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < n DO
    START TRANSACTION;
    INSERT INTO t VALUES (i, UUID(), RAND(), NOW(6), i);
    UPDATE t SET v = v + 1 WHERE id = i - 1;
    COMMIT;
    SET i = i + 1;
  END WHILE;
END;;
CREATE PROCEDURE make_table(IN name VARCHAR(64))
BEGIN
  SET @s = CONCAT('CREATE TABLE ', name, ' (id INT PRIMARY KEY, v INT)');
  PREPARE st FROM @s;
  EXECUTE st;
  DEALLOCATE PREPARE st;
  SET @s = CONCAT('INSERT INTO ', name, ' SELECT id, v FROM t WHERE id < 5');
  PREPARE st FROM @s;
  EXECUTE st;
  DEALLOCATE PREPARE st;
END;;
CREATE PROCEDURE failing()
BEGIN
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; INSERT INTO log (msg) VALUES ('rolled back'); END;
  START TRANSACTION;
  INSERT INTO t VALUES (100, UUID(), 0, NOW(6), 0);
  INSERT INTO t VALUES (0, 'duplicate', 0, NOW(6), 0);
  COMMIT;
END;;
DELIMITER ;
CALL fill(20);
UPDATE t SET v = bump(v) WHERE id % 3 = 0;
CALL make_table('made');
CALL failing();
INSERT INTO made SELECT id + 100, bump(id) FROM t WHERE id BETWEEN 10 AND 12;
DROP PROCEDURE fill;
