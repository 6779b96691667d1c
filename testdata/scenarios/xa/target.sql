-- Triggers on the target only: the rows of an XA transaction must not
-- fire them at its XA COMMIT either (prepl applies those rows with the
-- BINLOG statement, as any rows of a table with triggers).
USE xatr;
DELIMITER ;;
CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO log (what) VALUES (CONCAT('ins ', NEW.id));;
CREATE TRIGGER t_bu BEFORE UPDATE ON t FOR EACH ROW SET NEW.v = NEW.v + 1000;;
DELIMITER ;
