-- keyless: 0-1-18 0-1-19 0-1-20
-- chunk 0
BEGIN;
INSERT INTO `g`.`nokey` (`a`,`b`) VALUES (1,_utf8mb4 'x'),(1,_utf8mb4 'x'),(2,_utf8mb4 'y');
UPDATE `g`.`nokey` SET `a`=2,`b`=_utf8mb4 'z' WHERE `a`<=>2 AND `b`<=>_utf8mb4 'y' LIMIT 1;
DELETE FROM `g`.`nokey` WHERE `a`<=>1 AND `b`<=>_utf8mb4 'x' LIMIT 1;
