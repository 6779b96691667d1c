package mysql

import "testing"

func TestEventOf(t *testing.T) {
	for _, c := range []struct {
		sql, schema, name string
		ok                bool
	}{
		{"CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM t", "", "e", true},
		{"CREATE DEFINER=`ghost`@`%` EVENT `dm`.`e 2` ON SCHEDULE AT '2030-01-01' DO SELECT 1", "dm", "e 2", true},
		{"CREATE OR REPLACE DEFINER = 'event'@'%' EVENT IF NOT EXISTS Sch.Ev ON SCHEDULE EVERY 1 HOUR DO SELECT 1", "Sch", "Ev", true},
		{"/* c */ alter event e ENABLE", "", "e", true},
		{"ALTER EVENT d.e RENAME TO d2.f", "d2", "f", true},
		{"ALTER DEFINER=CURRENT_USER EVENT `we``ird` COMMENT 'x'", "", "we`ird", true},
		{"DROP EVENT e", "", "", false},
		{"CREATE TABLE event (id INT)", "", "", false},
		{"CREATE DEFINER=`u`@`h` PROCEDURE p() SELECT 1", "", "", false},
	} {
		schema, name, ok := eventOf(c.sql)
		if schema != c.schema || name != c.name || ok != c.ok {
			t.Errorf("eventOf(%q) = %q, %q, %v; want %q, %q, %v", c.sql, schema, name, ok, c.schema, c.name, c.ok)
		}
	}
}
