-- delete: 0-1-13
-- chunk 0
BEGIN;
DELETE FROM `g`.`t` WHERE `id`=1;
