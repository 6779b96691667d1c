-- uncompacted: 0-1-15 0-1-16 0-1-17
-- chunk 0
BEGIN;
UPDATE `g`.`t` SET `id`=2,`v`=21,`s`=_utf8mb4 'b' WHERE `id`=2;
UPDATE `g`.`t` SET `id`=3,`v`=31,`s`=_utf8mb4 'c' WHERE `id`=3;
DELETE FROM `g`.`t` WHERE `id`=4;
INSERT INTO `g`.`t` (`id`,`v`,`s`) VALUES (6,60,_utf8mb4 'f');
UPDATE `g`.`t` SET `id`=2,`v`=21,`s`=_utf8mb4 'bb' WHERE `id`=2;
