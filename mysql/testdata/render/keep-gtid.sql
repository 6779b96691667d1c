-- keep-gtid: 0-1-11
-- chunk 0
SET SESSION gtid_domain_id=0, server_id=1, gtid_seq_no=11;
BEGIN;
INSERT INTO `g`.`t` (`id`,`v`,`s`) VALUES (1,10,_utf8mb4 'a');
