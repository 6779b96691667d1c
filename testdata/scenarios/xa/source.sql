CREATE DATABASE xa;
USE xa;
CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20));
CREATE TABLE u (id INT PRIMARY KEY, n INT NOT NULL, UNIQUE KEY (n));
-- Prepare, then commit at once.
XA START 'x1';
INSERT INTO t VALUES (1, 'x1');
XA END 'x1';
XA PREPARE 'x1';
XA COMMIT 'x1';
-- One phase: an ordinary transaction.
XA START 'x2';
INSERT INTO t VALUES (2, 'x2 one phase');
XA END 'x2';
XA COMMIT 'x2' ONE PHASE;
-- Rolled back after PREPARE: nothing of it may show.
XA START 'x3';
INSERT INTO t VALUES (3, 'rolled back');
XA END 'x3';
XA PREPARE 'x3';
XA ROLLBACK 'x3';
-- Several statements, several tables, all three row kinds.
INSERT INTO u VALUES (1, 10), (2, 20), (3, 30);
XA START X'0a0b', 'bq', 7;
UPDATE u SET n = n + 100 WHERE id <= 2;
DELETE FROM u WHERE id = 3;
INSERT INTO t VALUES (7, 'binary xid');
XA END X'0a0b', 'bq', 7;
XA PREPARE X'0a0b', 'bq', 7;
XA COMMIT X'0a0b', 'bq', 7;
-- An empty XA transaction.
XA START 'empty';
XA END 'empty';
XA PREPARE 'empty';
XA COMMIT 'empty';
XA START 'x4';
UPDATE t SET v = 'x4' WHERE id = 1;
XA END 'x4';
XA PREPARE 'x4';
-- split
-- The prepared x4 outlives its session; others commit meanwhile.
INSERT INTO xa.t VALUES (5, 'between');
XA COMMIT 'x4';
-- Ordinary transactions touching x4's row right after its COMMIT.
UPDATE xa.t SET v = 'after x4' WHERE id = 1;
INSERT INTO xa.t VALUES (6, 'after');
UPDATE xa.t SET v = CONCAT(v, '+') WHERE id IN (1, 6);
-- Two prepared transactions committed in the opposite order, with
-- ordinary transactions between them.
XA START 'a';
UPDATE xa.t SET v = 'a' WHERE id = 5;
INSERT INTO xa.u VALUES (4, 40);
XA END 'a';
XA PREPARE 'a';
-- split
XA START 'b';
UPDATE xa.t SET v = 'b' WHERE id = 6;
DELETE FROM xa.u WHERE id = 1;
XA END 'b';
XA PREPARE 'b';
-- split
INSERT INTO xa.t VALUES (8, 'between a and b');
XA COMMIT 'b';
UPDATE xa.t SET v = 'after b' WHERE id = 6;
XA COMMIT 'a';
UPDATE xa.t SET v = 'after a' WHERE id = 5;
DELETE FROM xa.u WHERE id = 4;
-- A prepared transaction rolled back from another session, between others.
XA START 'c';
INSERT INTO xa.t VALUES (9, 'c rolled back');
XA END 'c';
XA PREPARE 'c';
-- split
UPDATE xa.t SET v = 'not c' WHERE id = 8;
XA ROLLBACK 'c';
INSERT INTO xa.t VALUES (9, 'after c');
-- An XA transaction on a table with triggers on the target.
XA START 'trig';
INSERT INTO xatr.t VALUES (1, 1), (2, 2);
UPDATE xatr.t SET v = v * 2 WHERE id = 1;
XA END 'trig';
XA PREPARE 'trig';
-- split
INSERT INTO xatr.log (what) VALUES ('from the source');
XA COMMIT 'trig';
UPDATE xatr.t SET v = v + 1 WHERE id = 2;
-- A prepared part larger than one stored part (1 MiB of events).
CREATE TABLE xa.big (id INT PRIMARY KEY, b MEDIUMTEXT);
XA START 'big';
INSERT INTO xa.big SELECT seq, REPEAT(CHAR(65 + seq % 26), 70000) FROM xa.seq_1_to_40;
UPDATE xa.big SET b = CONCAT(b, 'z') WHERE id % 3 = 0;
XA END 'big';
XA PREPARE 'big';
-- split
INSERT INTO xa.t VALUES (10, 'during big');
XA COMMIT 'big';
