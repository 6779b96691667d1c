-- Foreign keys without a cascading action (NO ACTION, RESTRICT: what
-- TPC-C-like schemas declare) on every table, hot parent rows updated by
-- every transaction, a key-less child: compaction and parallel units
-- apply them with the target's checks off; the end state must still be
-- the source's. Parents deleted and re-inserted, keys that change, a
-- self-reference, children inserted before their parent in one unit.
CREATE DATABASE fkh;
USE fkh;
CREATE TABLE warehouse (w_id INT PRIMARY KEY, w_ytd DECIMAL(12,2) NOT NULL);
CREATE TABLE district (d_w_id INT, d_id INT, d_next_o_id INT NOT NULL, d_ytd DECIMAL(12,2) NOT NULL,
  PRIMARY KEY (d_w_id, d_id), FOREIGN KEY (d_w_id) REFERENCES warehouse (w_id));
CREATE TABLE customer (c_w_id INT, c_d_id INT, c_id INT, c_balance DECIMAL(12,2), c_data VARCHAR(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id), FOREIGN KEY (c_w_id, c_d_id) REFERENCES district (d_w_id, d_id) ON DELETE RESTRICT);
CREATE TABLE orders (o_w_id INT, o_d_id INT, o_id INT, o_c_id INT, PRIMARY KEY (o_w_id, o_d_id, o_id),
  FOREIGN KEY (o_w_id, o_d_id, o_c_id) REFERENCES customer (c_w_id, c_d_id, c_id));
CREATE TABLE order_line (ol_w_id INT, ol_d_id INT, ol_o_id INT, ol_number INT, ol_amount DECIMAL(6,2),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number), FOREIGN KEY (ol_w_id, ol_d_id, ol_o_id) REFERENCES orders (o_w_id, o_d_id, o_id));
CREATE TABLE history (h_c_id INT, h_w_id INT, h_d_id INT, h_amount DECIMAL(6,2), h_data VARCHAR(24),
  FOREIGN KEY (h_w_id, h_d_id) REFERENCES district (d_w_id, d_id));
CREATE TABLE emp (id INT PRIMARY KEY, boss INT NULL, name VARCHAR(10), FOREIGN KEY (boss) REFERENCES emp (id));
INSERT INTO warehouse VALUES (1, 0), (2, 0);
INSERT INTO district VALUES (1, 1, 1, 0), (1, 2, 1, 0), (2, 1, 1, 0);
INSERT INTO customer VALUES (1, 1, 1, 0, REPEAT('a', 300)), (1, 1, 2, 0, 'b'), (1, 2, 1, 0, 'c'), (2, 1, 1, 0, 'd');
DELIMITER //
CREATE PROCEDURE new_order(w INT, d INT, c INT, n INT)
BEGIN
  DECLARE o INT;
  DECLARE i INT DEFAULT 1;
  START TRANSACTION;
  SELECT d_next_o_id INTO o FROM district WHERE d_w_id = w AND d_id = d FOR UPDATE;
  UPDATE district SET d_next_o_id = o + 1 WHERE d_w_id = w AND d_id = d;
  INSERT INTO orders VALUES (w, d, o, c);
  WHILE i <= n DO
    INSERT INTO order_line VALUES (w, d, o, i, i * 1.5);
    SET i = i + 1;
  END WHILE;
  COMMIT;
END//
CREATE PROCEDURE payment(w INT, d INT, c INT, amt DECIMAL(6,2))
BEGIN
  START TRANSACTION;
  UPDATE warehouse SET w_ytd = w_ytd + amt WHERE w_id = w;
  UPDATE district SET d_ytd = d_ytd + amt WHERE d_w_id = w AND d_id = d;
  UPDATE customer SET c_balance = c_balance - amt, c_data = CONCAT(LEFT(c_data, 200), amt) WHERE c_w_id = w AND c_d_id = d AND c_id = c;
  INSERT INTO history VALUES (c, w, d, amt, 'pay');
  COMMIT;
END//
DELIMITER ;
CALL new_order(1, 1, 1, 3);
CALL payment(1, 1, 2, 10);
CALL new_order(1, 2, 1, 2);
CALL payment(1, 1, 1, 5);
CALL new_order(1, 1, 2, 4);
CALL payment(2, 1, 1, 7);
CALL new_order(2, 1, 1, 1);
CALL payment(1, 2, 1, 1);
CALL new_order(1, 1, 1, 2);
-- split
USE fkh;
CALL payment(1, 1, 1, 3);
CALL new_order(1, 2, 1, 3);
CALL payment(2, 1, 1, 2);
CALL new_order(1, 1, 2, 1);
-- A child inserted in the same transaction as its parent, then the
-- parent's key moved (no cascade: the child goes first).
BEGIN;
INSERT INTO warehouse VALUES (3, 0);
INSERT INTO district VALUES (3, 1, 1, 0);
INSERT INTO customer VALUES (3, 1, 1, 0, 'e');
COMMIT;
BEGIN;
DELETE FROM customer WHERE c_w_id = 3;
DELETE FROM district WHERE d_w_id = 3;
UPDATE warehouse SET w_id = 4 WHERE w_id = 3;
INSERT INTO district VALUES (4, 1, 1, 0);
INSERT INTO customer VALUES (4, 1, 1, 0, 'f');
COMMIT;
-- A parent deleted and re-inserted with the same key, its children gone
-- and back.
BEGIN;
DELETE FROM order_line WHERE ol_w_id = 2;
DELETE FROM orders WHERE o_w_id = 2;
DELETE FROM history WHERE h_w_id = 2;
DELETE FROM customer WHERE c_w_id = 2;
DELETE FROM district WHERE d_w_id = 2;
DELETE FROM warehouse WHERE w_id = 2;
INSERT INTO warehouse VALUES (2, 100);
INSERT INTO district VALUES (2, 1, 50, 0);
INSERT INTO customer VALUES (2, 1, 1, 9, 'again');
COMMIT;
CALL new_order(2, 1, 1, 2);
-- A self-reference: a chain built, re-pointed and cut.
INSERT INTO emp VALUES (1, NULL, 'ceo');
INSERT INTO emp VALUES (2, 1, 'vp'), (3, 2, 'dev');
BEGIN;
INSERT INTO emp VALUES (4, 1, 'vp2');
UPDATE emp SET boss = 4 WHERE id = 3;
DELETE FROM emp WHERE id = 2;
COMMIT;
UPDATE emp SET name = 'cto' WHERE id = 4;
-- Checks off in the source session: an orphan the source allowed.
SET foreign_key_checks = 0;
INSERT INTO orders VALUES (1, 1, 999, 42);
SET foreign_key_checks = 1;
CALL payment(1, 1, 1, 4);
