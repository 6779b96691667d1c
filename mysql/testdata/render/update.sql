-- update: 0-1-12
-- chunk 0
BEGIN;
UPDATE `g`.`t` SET `id`=1,`v`=11,`s`=_utf8mb4 'a' WHERE `id`=1;
