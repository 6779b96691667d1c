INSERT INTO tt.t VALUES (1, 1), (2, 2), (3, 3);
UPDATE tt.t SET v = v * 2 WHERE id < 3;
DELETE FROM tt.t WHERE id = 3;
INSERT INTO tt.log (what) VALUES ('from the source');
