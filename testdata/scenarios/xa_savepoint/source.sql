-- SAVEPOINTs inside XA transactions (MariaDB's main.xa, MDEV-14609). The
-- binlog keeps SAVEPOINT among an XA transaction's rows; a ROLLBACK TO
-- SAVEPOINT is logged only when a non-transactional table was written
-- meanwhile (MyISAM's rows go as a transaction of their own before the
-- XA transaction), and then the transactional rows it undid are logged
-- too, before it: the replica applies them and rolls them back. prepl
-- applies an XA transaction's rows at its XA COMMIT and must keep only
-- what the source kept.
CREATE DATABASE xs;
USE xs;
CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
CREATE TABLE m (id INT PRIMARY KEY) ENGINE=MyISAM;
-- main.xa: a savepoint after the rows, nothing rolled back.
XA START 'a';
INSERT INTO t VALUES (1, 'a');
SAVEPOINT savep;
XA END 'a';
XA PREPARE 'a';
XA COMMIT 'a';
-- Rows undone by ROLLBACK TO, with a MyISAM write so that it is logged.
XA START 'b';
INSERT INTO t VALUES (10, 'b kept');
SAVEPOINT s1;
INSERT INTO t VALUES (11, 'b undone');
UPDATE t SET v = 'b undone' WHERE id = 10;
INSERT INTO m VALUES (11);
ROLLBACK TO SAVEPOINT s1;
INSERT INTO t VALUES (12, 'b after');
SAVEPOINT s2;
UPDATE t SET v = 'b released' WHERE id = 12;
RELEASE SAVEPOINT s2;
XA END 'b';
XA PREPARE 'b';
-- split
INSERT INTO xs.t VALUES (20, 'between');
XA COMMIT 'b';
-- Nested savepoints: rolling back to the outer one drops the inner one;
-- a savepoint set again under the same name moves.
XA START 'c';
SAVEPOINT o;
INSERT INTO xs.t VALUES (30, 'c undone');
SAVEPOINT i;
INSERT INTO xs.t VALUES (31, 'c undone');
INSERT INTO xs.m VALUES (31);
ROLLBACK TO o;
INSERT INTO xs.t VALUES (32, 'c kept');
SAVEPOINT o;
DELETE FROM xs.t WHERE id = 20;
INSERT INTO xs.m VALUES (32);
ROLLBACK TO SAVEPOINT o;
UPDATE xs.t SET v = 'c' WHERE id = 1;
XA END 'c';
XA PREPARE 'c';
XA COMMIT 'c';
-- Rolled back after ROLLBACK TO: nothing of it shows.
XA START 'd';
SAVEPOINT s;
INSERT INTO xs.t VALUES (40, 'd');
INSERT INTO xs.m VALUES (40);
ROLLBACK TO SAVEPOINT s;
INSERT INTO xs.t VALUES (41, 'd');
XA END 'd';
XA PREPARE 'd';
XA ROLLBACK 'd';
-- An ordinary transaction right after, on the same rows.
UPDATE xs.t SET v = CONCAT(v, '+') WHERE id IN (1, 10, 12, 32);
