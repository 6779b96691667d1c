INSERT INTO tu.t VALUES (1, 'x');
INSERT INTO tu.t VALUES (2, 'y'), (3, 'x');
INSERT INTO tu.t VALUES (4, 'z');
