-- A CREATE OR REPLACE TABLE ... SELECT that fails after it dropped the
-- old table: MariaDB logs the drop as a group of its own, `BEGIN`, `DROP
-- TABLE IF EXISTS t /* Generated to handle failed CREATE OR REPLACE */`,
-- `ROLLBACK` (MariaDB's main.create_or_replace). The DROP commits on its
-- own: MariaDB's replica and `mariadb-binlog | mariadb` drop the table,
-- and the CREATE TABLE after it finds none. prepl took the group for a
-- rolled back transaction, kept the old table, and stopped there with
-- error 1050. (Each failing statement runs in a block with a handler, so
-- that the client goes on; the server logs it as it would alone.)
CREATE DATABASE cf;
USE cf;
CREATE TABLE t (id INT PRIMARY KEY) ENGINE=InnoDB;
INSERT INTO t VALUES (1);
DELIMITER ;;
BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;
  CREATE OR REPLACE TABLE t (a INT) SELECT 1 AS a, 2 AS a;
END;;
DELIMITER ;
CREATE TABLE t (id INT PRIMARY KEY, v INT);
INSERT INTO t VALUES (2, 2);
-- The same on MyISAM, and where no table was there to drop.
CREATE TABLE m (id INT PRIMARY KEY) ENGINE=MyISAM;
INSERT INTO m VALUES (1);
DELIMITER ;;
BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;
  CREATE OR REPLACE TABLE m (a INT) ENGINE=MyISAM SELECT 1 AS a, 2 AS a;
  CREATE OR REPLACE TABLE n (a INT) SELECT 1 AS a, 2 AS a;
END;;
DELIMITER ;
CREATE TABLE m (id INT PRIMARY KEY, w INT) ENGINE=MyISAM;
INSERT INTO m VALUES (3, 3);
CREATE TABLE n (id INT PRIMARY KEY);
INSERT INTO n VALUES (4);
