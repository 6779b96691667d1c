package filter

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDDL: any statement text, through the DDL filter and its schema
// rewrite. Must never panic; a kept statement stays valid UTF-8 when it
// was, and without a rewrite rule it is returned as written.
func FuzzDDL(f *testing.F) {
	for _, c := range []struct{ sql, schema string }{
		{"CREATE TABLE shop.orders (id INT PRIMARY KEY)", ""},
		{"CREATE TABLE IF NOT EXISTS `shop`.`x``y` LIKE shop.orders", ""},
		{"ALTER TABLE shop.secret_x RENAME TO shop.public_x", ""},
		{"RENAME TABLE shop.a TO shop.b, app.c TO app.d", ""},
		{"DROP TABLE IF EXISTS shop.a, shop.secret_b, `app`.tmp /* c */", "shop"},
		{"CREATE DEFINER=`root`@`%` TRIGGER shop.tr BEFORE INSERT ON shop.orders FOR EACH ROW SET NEW.a = 1", ""},
		{"CREATE OR REPLACE VIEW v AS SELECT * FROM shop.orders", "shop"},
		{"DROP DATABASE shop", ""},
		{"CREATE INDEX i ON shop.orders (a)", ""},
		{"TRUNCATE TABLE app.tmp", ""},
		{"GRANT SELECT ON shop.* TO 'u'@'%'", "shop"},
		{"ALTER TABLE t ADD COLUMN note VARCHAR(20) DEFAULT 'shop.orders' -- x\n, ADD KEY (a)", "shop"},
		{"create table `a\"b`.c (x int) comment \"it's\"", "a\"b"},
	} {
		f.Add(c.sql, c.schema)
	}
	rules, err := New([]string{"shop.*", "app.*", "a\"b.*"}, []string{"shop.secret*", "app.tmp"}, []string{"shop=shop2", "a\"b=x"})
	if err != nil {
		f.Fatal(err)
	}
	keepAll, err := New(nil, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sql, schema string) {
		out, keep := rules.DDL(sql, schema)
		if keep && utf8.ValidString(sql) && !utf8.ValidString(out) {
			t.Fatalf("DDL(%q) = %q: not valid UTF-8", sql, out)
		}
		if !keep && out != sql && strings.TrimSpace(out) == "" {
			t.Fatalf("DDL(%q) skipped with an emptied statement", sql)
		}
		if got, keep := keepAll.DDL(sql, schema); !keep || got != sql {
			t.Fatalf("an empty filter changed or skipped %q: %q %v", sql, got, keep)
		}
	})
}
