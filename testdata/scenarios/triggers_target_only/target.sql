-- Triggers that exist on the target only (as on a replica with its own
-- bookkeeping): row events must not fire them, as MariaDB's replica does
-- not (slave_run_triggers_for_rbr=NO).
USE tt;
DELIMITER ;;
CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO log (what) VALUES (CONCAT('ins ', NEW.id));;
CREATE TRIGGER t_bu BEFORE UPDATE ON t FOR EACH ROW SET NEW.v = NEW.v + 1000;;
CREATE TRIGGER t_ad AFTER DELETE ON t FOR EACH ROW INSERT INTO log (what) VALUES (CONCAT('del ', OLD.id));;
DELIMITER ;
