-- (Each failing statement runs in a block with a handler, so that the
-- client goes on; the server logs it as it would alone.)
CREATE DATABASE dm;
USE dm;
-- A DROP of several tables or sequences some of which do not exist is
-- logged as the server's own DROP of the names it was given that are not
-- of another kind, with error code 0 (MariaDB's sql_sequence.create); the
-- replica (slave_ddl_exec_mode=IDEMPOTENT, the default) drops those that
-- exist and goes on.
CREATE SEQUENCE s1;
CREATE TABLE t1 (a INT);
CREATE TABLE t2 (a INT);
DELIMITER ;;
BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;
  DROP SEQUENCE s1, s2;
END;;
DELIMITER ;
CREATE SEQUENCE s1;
DELIMITER ;;
BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;
  DROP SEQUENCE t1, t2, s1, s2;
END;;
DELIMITER ;
CREATE TABLE d1 (a INT);
DELIMITER ;;
BEGIN NOT ATOMIC DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;
  DROP TABLE d1, dmissing;
END;;
DELIMITER ;
CREATE SEQUENCE s3;
INSERT INTO t1 VALUES (1);
