CREATE DATABASE xa;
USE xa;
CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20));
XA START 'x1';
INSERT INTO t VALUES (1, 'x1');
XA END 'x1';
XA PREPARE 'x1';
XA COMMIT 'x1';
XA START 'x2';
INSERT INTO t VALUES (2, 'x2 one phase');
XA END 'x2';
XA COMMIT 'x2' ONE PHASE;
XA START 'x3';
INSERT INTO t VALUES (3, 'rolled back');
XA END 'x3';
XA PREPARE 'x3';
XA ROLLBACK 'x3';
XA START 'x4';
UPDATE t SET v = 'x4' WHERE id = 1;
XA END 'x4';
XA PREPARE 'x4';
-- split
-- The prepared x4 outlives its session; others commit meanwhile.
INSERT INTO xa.t VALUES (5, 'between');
XA COMMIT 'x4';
INSERT INTO xa.t VALUES (6, 'after');
