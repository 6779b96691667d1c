-- compacted: 0-1-15 0-1-16 0-1-17
-- chunk 0
BEGIN;
DELETE FROM `g`.`t` WHERE `id` IN (4);
INSERT INTO `g`.`t` (`id`,`v`,`s`) VALUES (6,60,_utf8mb4 'f');
INSERT INTO `g`.`t` (`id`,`v`,`s`) VALUES (2,21,_utf8mb4 'bb'),(3,31,_utf8mb4 'c') ON DUPLICATE KEY UPDATE `id`=VALUES(`id`),`v`=VALUES(`v`),`s`=VALUES(`s`);
