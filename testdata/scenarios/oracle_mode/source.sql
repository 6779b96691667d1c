-- DDL in forms a replica runs with the session the Query event carries:
-- sql_mode=ORACLE (double-quoted names, VARCHAR2, PL/SQL procedures, ||
-- as concatenation) and SET STATEMENT ... FOR a DDL.
CREATE DATABASE om;
USE om;
SET SESSION sql_mode = 'ORACLE';
CREATE TABLE "t" ("id" INT PRIMARY KEY, "v" VARCHAR2(20));
DELIMITER //
CREATE PROCEDURE p(a IN INT) AS
BEGIN
  INSERT INTO "t" VALUES (a, 'x' || a);
END;
//
DELIMITER ;
CALL p(1);
CALL p(2);
SET SESSION sql_mode = DEFAULT;
INSERT INTO t VALUES (3, CONCAT('y', 3));
SET STATEMENT sql_mode = '' FOR CREATE TABLE u (id INT PRIMARY KEY, d DATE DEFAULT '0000-00-00');
INSERT INTO u (id) VALUES (1);
SET STATEMENT lc_time_names = 'de_DE' FOR ALTER TABLE u ADD COLUMN m VARCHAR(20) DEFAULT (DATE_FORMAT('2020-03-01', '%M'));
/* a comment first */ ALTER TABLE t ADD COLUMN z INT DEFAULT 9;
INSERT INTO u (id) VALUES (2);
