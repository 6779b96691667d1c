-- The database exists before the binlog starts, so that target.sql can
-- put a table in it.
CREATE DATABASE di;
