-- A 20 MiB value, which no statement fits in a target whose
-- max_allowed_packet is 16 MiB (MariaDB's replica applies the row event
-- itself, within slave_max_allowed_packet): prepl stops before it with an
-- error that names the transaction and says to raise max_allowed_packet,
-- and applies nothing of it.
CREATE DATABASE vp;
USE vp;
CREATE TABLE b (id INT PRIMARY KEY, data LONGBLOB) ENGINE=InnoDB;
INSERT INTO b VALUES (1, 'small');
INSERT INTO b VALUES (2, REPEAT(UNHEX('00FF275C'), 5 * 1024 * 1024));
INSERT INTO b VALUES (3, 'after');
