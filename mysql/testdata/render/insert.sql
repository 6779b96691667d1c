-- insert: 0-1-11
-- chunk 0
BEGIN;
INSERT INTO `g`.`t` (`id`,`v`,`s`) VALUES (1,10,_utf8mb4 'a');
