package filter

import (
	"path"
	"strings"
	"testing"

	"github.com/prepl/prepl/txn"
)

func mustNew(t *testing.T, include, exclude, rewrite []string) *Filter {
	t.Helper()
	f, err := New(include, exclude, rewrite)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestNewRejectsBadRules(t *testing.T) {
	for _, c := range []struct {
		include, exclude, rewrite []string
		want                      string
	}{
		{include: []string{"orders"}, want: "want SCHEMA.TABLE"},
		{exclude: []string{".t"}, want: "want SCHEMA.TABLE"},
		{include: []string{"shop.[a"}, want: "bad pattern"},
		{rewrite: []string{"shop"}, want: "SOURCE_SCHEMA=TARGET_SCHEMA"},
		{rewrite: []string{"shop="}, want: "SOURCE_SCHEMA=TARGET_SCHEMA"},
		{rewrite: []string{"sh*p=x"}, want: "plain schema names"},
		{rewrite: []string{"a=b", "a=c"}, want: "rewritten twice"},
	} {
		_, err := New(c.include, c.exclude, c.rewrite)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%v, %v, %v) = %v, want an error with %q", c.include, c.exclude, c.rewrite, err, c.want)
		}
	}
}

func TestTableAndSchema(t *testing.T) {
	f := mustNew(t, []string{"shop.*", "crm.customer?", "log_[0-9]*.events"}, []string{"shop.tmp_*", "crm.*"}, nil)
	tables := []struct {
		schema, table string
		want          bool
	}{
		{"shop", "orders", true},
		{"shop", "tmp_import", false},
		{"crm", "customers", false}, // included, but crm.* excludes it
		{"log_2024", "events", true},
		{"log_2024", "other", false},
		{"logx", "events", false},
		{"Shop", "orders", false}, // case-sensitive
		{"other", "t", false},
		{"shop", "a/b", true},      // '/' is an ordinary character of a name
		{"shop", "tmp_a/b", false}, // ... excluded by shop.tmp_*
	}
	for _, c := range tables {
		if got := f.Table(c.schema, c.table); got != c.want {
			t.Errorf("Table(%s, %s) = %v, want %v", c.schema, c.table, got, c.want)
		}
	}
	schemas := map[string]bool{"shop": true, "crm": false, "log_1": true, "other": false}
	for s, want := range schemas {
		if got := f.Schema(s); got != want {
			t.Errorf("Schema(%s) = %v, want %v", s, got, want)
		}
	}
	all := mustNew(t, nil, []string{"*.audit"}, nil)
	if !all.Table("x", "y") || all.Table("x", "audit") || !all.Schema("x") {
		t.Errorf("exclude-only filter: wrong decisions")
	}
}

// TestUnmatched: an include pattern is unmatched until a table asked
// about matches it, overlapping patterns included (a table matched by the
// first is matched by the second too); an excluded table still marks the
// include pattern it matched (the pattern is right, the exclude wins).
func TestUnmatched(t *testing.T) {
	f := mustNew(t, []string{"shop.*", "shop.orders", "Shop.*", "crm.customers"}, []string{"crm.*"}, nil)
	if got := strings.Join(f.Unmatched(), " "); got != "shop.* shop.orders Shop.* crm.customers" {
		t.Errorf("before anything: %q", got)
	}
	for _, c := range [][2]string{{"shop", "orders"}, {"crm", "customers"}, {"other", "t"}} {
		f.Table(c[0], c[1])
	}
	if got := strings.Join(f.Unmatched(), " "); got != "Shop.*" {
		t.Errorf("after shop.orders, crm.customers and other.t: unmatched %q, want Shop.*", got)
	}
	if got := mustNew(t, nil, []string{"prepl.*"}, nil).Unmatched(); len(got) != 0 {
		t.Errorf("exclude-only filter: unmatched %v", got)
	}
}

// TestGlobIsPathMatch: the direct comparisons of "*" and plain names
// decide as path.Match does, for names without '/'; with one, a wildcard
// still matches it.
func TestGlobIsPathMatch(t *testing.T) {
	globs := []string{"*", "shop", "shop_1", "s*", "*p", "sh?p", "[a-z]*", "log_[0-9]*", `sh\op`, "", "a/b", "a*b"}
	names := []string{"shop", "shop_1", "Shop", "sho", "shopx", "log_2024", "", "a", "ab", "axb"}
	for _, g := range globs {
		c := compileGlob(g)
		for _, n := range names {
			want, _ := path.Match(g, n)
			if got := c.match(n); got != want {
				t.Errorf("glob %q, name %q: %v, path.Match says %v", g, n, got, want)
			}
		}
	}
	for _, c := range []struct {
		glob, name string
		want       bool
	}{{"*", "a/b", true}, {"a*b", "a/b", true}, {"a?b", "a/b", true}, {"a/b", "a/b", true}, {"a/*", "a/b", true}, {"a/*", "ab", false}} {
		if got := compileGlob(c.glob).match(c.name); got != c.want {
			t.Errorf("glob %q, name %q: %v, want %v", c.glob, c.name, got, c.want)
		}
	}
}

func row(tb *txn.Table, id int64) txn.Change {
	return txn.Change{Row: &txn.RowChange{Kind: txn.Insert, Table: tb, After: []txn.Value{id}, AfterCols: []bool{true}}}
}

func TestApplyRows(t *testing.T) {
	orders := &txn.Table{ID: 1, Schema: "shop", Name: "orders"}
	tmp := &txn.Table{ID: 2, Schema: "shop", Name: "tmp_x"}
	other := &txn.Table{ID: 3, Schema: "other", Name: "t"}
	f := mustNew(t, []string{"shop.*"}, []string{"shop.tmp_*"}, []string{"shop=shop_copy"})

	tx := &txn.Txn{Changes: []txn.Change{row(orders, 1), row(tmp, 2), row(other, 3), row(orders, 4),
		{Stmt: &txn.Statement{SQL: "DROP TEMPORARY TABLE IF EXISTS shop.t1", Schema: "shop"}}}}
	if !f.Apply(tx) {
		t.Fatal("transaction with included rows reported empty")
	}
	if len(tx.Changes) != 3 || tx.Rows() != 2 {
		t.Fatalf("kept %d changes (%d rows), want 2 rows and the statement", len(tx.Changes), tx.Rows())
	}
	for _, ch := range tx.Changes[:2] {
		if ch.Row.Table.Schema != "shop_copy" || ch.Row.Table.Name != "orders" {
			t.Errorf("row table %s, want shop_copy.orders", ch.Row.Table.QualifiedName())
		}
	}
	if tx.Changes[0].Row.Table != tx.Changes[1].Row.Table {
		t.Error("the rewritten table is not shared between rows of one source table")
	}
	if orders.Schema != "shop" {
		t.Error("the source's *txn.Table was changed: it is shared with later transactions")
	}
	if st := tx.Changes[2].Stmt; st.SQL != "DROP TEMPORARY TABLE IF EXISTS `shop_copy`.t1" || st.Schema != "shop_copy" {
		t.Errorf("statement rewritten to %q in %q", st.SQL, st.Schema)
	}

	empty := &txn.Txn{Changes: []txn.Change{row(tmp, 1), row(other, 2)}}
	if f.Apply(empty) || len(empty.Changes) != 0 {
		t.Errorf("transaction of excluded tables only: kept %d changes", len(empty.Changes))
	}
	onlyRowsGone := &txn.Txn{Changes: []txn.Change{row(other, 1), {Stmt: &txn.Statement{SQL: "SAVEPOINT a"}}}}
	if f.Apply(onlyRowsGone) {
		t.Error("a transaction left with a SAVEPOINT and no rows should be skipped")
	}
	if !mustNew(t, nil, nil, nil).Apply(&txn.Txn{Changes: []txn.Change{row(other, 1)}}) {
		t.Error("an empty filter must keep everything")
	}
}

// TestSkipRows: --skip-rows drops row changes of the kinds it names, to
// the tables it names (all without a pattern), before the rename; a
// transaction left with no rows is skipped.
func TestSkipRows(t *testing.T) {
	orders := &txn.Table{ID: 1, Schema: "shop", Name: "orders"}
	archive := &txn.Table{ID: 2, Schema: "shop", Name: "archive_2026"}
	kinds := func(tx *txn.Txn) string {
		var s []string
		for _, ch := range tx.Changes {
			s = append(s, ch.Row.Table.Name+":"+ch.Row.Kind.String())
		}
		return strings.Join(s, " ")
	}
	change := func(tb *txn.Table, k txn.Kind) txn.Change { return txn.Change{Row: &txn.RowChange{Kind: k, Table: tb}} }
	all := func() *txn.Txn {
		return &txn.Txn{Changes: []txn.Change{change(orders, txn.Insert), change(archive, txn.Delete), change(orders, txn.Delete),
			change(archive, txn.Update), change(archive, txn.Insert)}}
	}
	cases := []struct {
		rules []string
		want  string
		keep  bool
		err   string
	}{
		{[]string{"shop.archive_*:delete"}, "orders:insert orders:delete archive_2026:update archive_2026:insert", true, ""},
		{[]string{"delete"}, "orders:insert archive_2026:update archive_2026:insert", true, ""},
		{[]string{"shop.archive_*:delete,update", "shop.orders:DELETE"}, "orders:insert archive_2026:insert", true, ""},
		{[]string{"insert,update,delete"}, "", false, ""},
		{[]string{"shop.*:truncate"}, "", false, "not a row change kind"},
		{[]string{"shop:delete"}, "", false, "want SCHEMA.TABLE"},
	}
	for _, c := range cases {
		f := mustNew(t, nil, nil, nil)
		err := f.SkipRows(c.rules)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.rules, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.rules, err)
		}
		if f.Empty() {
			t.Errorf("%v: the filter says it is empty", c.rules)
		}
		tx := all()
		if keep := f.Apply(tx); keep != c.keep || kinds(tx) != c.want {
			t.Errorf("%v: kept %v %q, want %v %q", c.rules, keep, kinds(tx), c.keep, c.want)
		}
	}
}

func TestApplyDDLTransaction(t *testing.T) {
	f := mustNew(t, nil, []string{"shop.secret"}, []string{"shop=s2"})
	tx := &txn.Txn{Changes: []txn.Change{{Stmt: &txn.Statement{SQL: "ALTER TABLE orders ADD c INT", Schema: "shop", DDL: true}}}}
	if !f.Apply(tx) || tx.Changes[0].Stmt.Schema != "s2" || tx.Changes[0].Stmt.SQL != "ALTER TABLE orders ADD c INT" {
		t.Errorf("DDL on an included table: %+v", tx.Changes[0].Stmt)
	}
	tx = &txn.Txn{Changes: []txn.Change{{Stmt: &txn.Statement{SQL: "ALTER TABLE secret ADD c INT", Schema: "shop", DDL: true}}}}
	if f.Apply(tx) {
		t.Error("DDL on an excluded table kept")
	}
}

func TestDDL(t *testing.T) {
	f := mustNew(t, []string{"shop.*", "app.*"}, []string{"shop.secret*", "app.tmp"}, []string{"shop=shop2"})
	cases := []struct {
		sql, schema string
		want        string // "" means skipped
	}{
		// Tables: decided by the table, every qualified name rewritten.
		{"CREATE TABLE shop.orders (id INT PRIMARY KEY)", "", "CREATE TABLE `shop2`.orders (id INT PRIMARY KEY)"},
		{"CREATE TABLE orders (id INT, c INT, FOREIGN KEY (c) REFERENCES shop.customers (id))", "shop",
			"CREATE TABLE orders (id INT, c INT, FOREIGN KEY (c) REFERENCES `shop2`.customers (id))"},
		{"CREATE TABLE IF NOT EXISTS `shop`.`x``y` LIKE shop.orders", "", "CREATE TABLE IF NOT EXISTS `shop2`.`x``y` LIKE `shop2`.orders"},
		{"CREATE OR REPLACE TEMPORARY TABLE shop.secret_1 (a INT)", "", ""},
		{"CREATE TABLE secret_2 (a INT)", "shop", ""},
		{"CREATE TABLE other.t (a INT)", "shop", ""},
		{"CREATE TABLE t (a INT)", "other", ""},
		{"ALTER TABLE shop.orders ADD COLUMN note VARCHAR(20) DEFAULT 'shop.orders'", "", "ALTER TABLE `shop2`.orders ADD COLUMN note VARCHAR(20) DEFAULT 'shop.orders'"},
		{"ALTER ONLINE IGNORE TABLE orders ADD KEY (a)", "shop", "ALTER ONLINE IGNORE TABLE orders ADD KEY (a)"},
		{"ALTER TABLE shop.secret_x RENAME TO shop.public_x", "", "ALTER TABLE `shop2`.secret_x RENAME TO `shop2`.public_x"},
		{"ALTER TABLE shop.secret_x RENAME COLUMN a TO b", "", ""},
		{"TRUNCATE shop.orders", "", "TRUNCATE `shop2`.orders"},
		{"TRUNCATE TABLE app.tmp", "", ""},
		{"RENAME TABLE shop.a TO shop.b, app.c TO app.d", "", "RENAME TABLE `shop2`.a TO `shop2`.b, app.c TO app.d"},
		{"RENAME TABLE app.tmp TO other.tmp", "", ""},
		{"CREATE UNIQUE INDEX ux USING BTREE ON shop.orders (a)", "", "CREATE UNIQUE INDEX ux USING BTREE ON `shop2`.orders (a)"},
		{"DROP INDEX ux ON app.tmp", "", ""},
		{"CREATE SEQUENCE shop.seq START WITH 10", "", "CREATE SEQUENCE `shop2`.seq START WITH 10"},
		// DROP lists lose the names not applied.
		{"DROP TABLE IF EXISTS shop.orders, shop.secret, app.t /* generated by server */", "",
			"DROP TABLE IF EXISTS `shop2`.orders, app.t /* generated by server */"},
		{"DROP TABLE `secret`", "shop", ""},
		{"DROP TABLE IF EXISTS `t` /* generated by server */", "shop", "DROP TABLE IF EXISTS `t` /* generated by server */"},
		{"DROP VIEW app.tmp, app.v", "", "DROP VIEW app.v"},
		// "--" and a tab start a comment, as in MariaDB: its quote does not
		// swallow the rest of the list.
		{"DROP TABLE app.tmp --\tit's\n, app.t", "", "DROP TABLE app.t"},
		// Views, triggers, routines: only their own names are rewritten.
		{"CREATE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW shop.v AS SELECT shop.orders.id FROM shop.orders", "",
			"CREATE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `shop2`.v AS SELECT shop.orders.id FROM shop.orders"},
		{"CREATE VIEW shop.secret_v AS SELECT 1", "", ""},
		{"CREATE DEFINER=root@localhost TRIGGER shop.trg BEFORE INSERT ON shop.orders FOR EACH ROW SET NEW.a = 1", "",
			"CREATE DEFINER=root@localhost TRIGGER `shop2`.trg BEFORE INSERT ON `shop2`.orders FOR EACH ROW SET NEW.a = 1"},
		{"CREATE TRIGGER trg AFTER UPDATE ON secret_t FOR EACH ROW SET @x = 1", "shop", ""},
		{"DROP TRIGGER IF EXISTS shop.trg", "", "DROP TRIGGER IF EXISTS `shop2`.trg"},
		{"CREATE PROCEDURE shop.p() BEGIN SELECT * FROM shop.orders; END", "", "CREATE PROCEDURE `shop2`.p() BEGIN SELECT * FROM shop.orders; END"},
		{"DROP FUNCTION IF EXISTS other.f", "", ""},
		// Databases follow Schema.
		{"CREATE DATABASE shop", "shop", "CREATE DATABASE `shop2`"},
		{"CREATE DATABASE IF NOT EXISTS `shop` CHARACTER SET utf8mb4", "", "CREATE DATABASE IF NOT EXISTS `shop2` CHARACTER SET utf8mb4"},
		{"DROP SCHEMA other", "", ""},
		{"ALTER DATABASE CHARACTER SET latin1", "app", "ALTER DATABASE CHARACTER SET latin1"},
		{"ALTER DATABASE CHARACTER SET latin1", "other", ""},
		// Unknown statements follow their default schema, and run without one.
		{"GRANT SELECT ON shop.* TO u@localhost", "", "GRANT SELECT ON shop.* TO u@localhost"},
		{"CREATE USER u@localhost", "other", ""},
		{"ANALYZE TABLE shop.orders", "shop", "ANALYZE TABLE shop.orders"},
		// Comments and strings are not names; executable comments are code.
		{"/*!40000 ALTER TABLE shop.orders DISABLE KEYS */", "", "/*!40000 ALTER TABLE `shop2`.orders DISABLE KEYS */"},
		{"/*!40000 ALTER TABLE shop.secret DISABLE KEYS */", "", ""},
		{"CREATE TABLE shop.c (a INT) COMMENT 'from shop.orders' /* shop.x */ -- shop.y", "",
			"CREATE TABLE `shop2`.c (a INT) COMMENT 'from shop.orders' /* shop.x */ -- shop.y"},
		{"CREATE TABLE shop.d (a INT) /*!50100 PARTITION BY HASH (a) */", "", "CREATE TABLE `shop2`.d (a INT) /*!50100 PARTITION BY HASH (a) */"},
	}
	for _, c := range cases {
		got, keep := f.DDL(c.sql, c.schema)
		if !keep {
			got = ""
		}
		if got != c.want {
			t.Errorf("DDL(%q in %q)\n got  %q\n want %q", c.sql, c.schema, got, c.want)
		}
	}
}

func TestTokenizeNamesAndQualifiers(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT a.b.c, x . y, 1.5, `a.b`.c, 'a.b', \"a.b\", u@a.b", "SELECT `A`.b.c, `X` . y, 1.5, `a.b`.c, 'a.b', \"a.b\", u@a.b"},
		{"INSERT INTO a.t SELECT * FROM x.t # a.t", "INSERT INTO `A`.t SELECT * FROM `X`.t # a.t"},
		{"GRANT ALL ON a.* TO b", "GRANT ALL ON `A`.* TO b"},
		{"x.`y` 'it''s a.b' `q``.r`.s", "`X`.`y` 'it''s a.b' `q``.r`.s"},
		{"'unterminated a.b", "'unterminated a.b"},
	}
	rw := map[string]string{"a": "A", "x": "X"}
	for _, c := range cases {
		if got := rewriteQualified(c.in, rw); got != c.want {
			t.Errorf("rewriteQualified(%q)\n got  %q\n want %q", c.in, got, c.want)
		}
	}
}
