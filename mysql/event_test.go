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

func TestScopeOf(t *testing.T) {
	for sql, want := range map[string]ddlScope{
		"CREATE DEFINER = 'ghost'@'%' EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM t": scopeEvents,
		"CREATE DEFINER=`u`@`h` PROCEDURE p() SELECT 1":                                 scopeTables,
		"/*!50106 ALTER DEFINER=CURRENT_USER EVENT e DISABLE */":                        scopeTables, // a version comment is skipped whole
		"ALTER EVENT e RENAME TO f":                                                     scopeEvents,
		"DROP EVENT IF EXISTS e":                                                        scopeEvents,
		"CREATE USER 'a'@'%' IDENTIFIED BY 'x'":                                         scopeAccounts,
		"GRANT SELECT ON *.* TO 'a'@'%'":                                                scopeAccounts,
		"RENAME TABLE a TO b":                                                           scopeTables,
		"CREATE TABLE event (id INT)":                                                   scopeTables,
		"CREATE OR REPLACE DEFINER=`r`@`%` VIEW v AS 1":                                 scopeTables,
	} {
		if got := scopeOf(sql); got != want {
			t.Errorf("scopeOf(%q) = %d, want %d", sql, got, want)
		}
	}
}

func TestSwapsTables(t *testing.T) {
	for sql, want := range map[string]bool{
		"RENAME TABLE a TO tmp, b TO a, tmp TO b":          true,
		"ALTER TABLE p EXCHANGE PARTITION p0 WITH TABLE x": true,
		"ALTER TABLE t RENAME TO u":                        true,
		"ALTER TABLE t RENAME COLUMN a TO b":               false,
		"ALTER TABLE t ADD COLUMN `exchange` INT":          false,
		"CREATE TABLE t (id INT)":                          false,
		"ALTER TABLE t COMMENT 'RENAME TO x'":              false,
	} {
		if got := swapsTables(sql); got != want {
			t.Errorf("swapsTables(%q) = %v, want %v", sql, got, want)
		}
	}
}
