-- LOAD DATA LOCAL INFILE from files in this folder (the client runs here).
CREATE DATABASE ld;
USE ld;
CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10), d DECIMAL(5,2));
LOAD DATA LOCAL INFILE 'data.tsv' INTO TABLE t;
LOAD DATA LOCAL INFILE 'replace.csv' REPLACE INTO TABLE t FIELDS TERMINATED BY ',' (id, s);
LOAD DATA LOCAL INFILE 'replace.csv' IGNORE INTO TABLE t FIELDS TERMINATED BY ',' (id, @s) SET s = CONCAT('ignored ', @s), d = 9;
