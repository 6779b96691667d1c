-- A table only the target has, which the source then creates.
CREATE TABLE di.x (a INT);
INSERT INTO di.x VALUES (7);
