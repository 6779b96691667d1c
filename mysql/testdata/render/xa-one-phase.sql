-- xa-one-phase: 0-1-25
-- chunk 0
BEGIN;
INSERT INTO `g`.`t` (`id`,`v`,`s`) VALUES (8,80,_utf8mb4 'h');
