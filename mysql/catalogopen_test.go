package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// tableOpens is the server's count of table opens, from its cache or not:
// information_schema opens every table it lists that its WHERE clause
// does not leave out by schema and table name.
func tableOpens(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var sum int64
	for _, v := range []string{"Table_open_cache_hits", "Table_open_cache_misses"} {
		var name string
		var n int64
		if err := db.QueryRow("SHOW SESSION STATUS LIKE '"+v+"'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		sum += n
	}
	return sum
}

// TestLoadTableDefOpens: loading a table's definition opens the tables
// of the user's schemas at most once per information_schema query that
// looks for the foreign keys referencing it (three for the two loads
// here), never the server's every table. A JOIN of KEY_COLUMN_USAGE and
// REFERENTIAL_CONSTRAINTS opened every table of the server, the system
// ones included, several times per load (476 opens for these two loads
// on an empty server, 950 with 80 more tables); the catalog loads tables
// again after every DDL, so a stream of DDL between INSERTs (MariaDB's
// innodb.innodb-fk) was quadratic.
func TestLoadTableDefOpens(t *testing.T) {
	ctx := context.Background()
	s := sandbox.MustStart(t, sandbox.Defaults())
	db := sandbox.MustOpen(t, s, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE DATABASE d2", "CREATE TABLE d.p (id INT PRIMARY KEY)", "CREATE TABLE d2.q (id INT PRIMARY KEY)",
		"CREATE TABLE d.c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES d.p (id) ON DELETE CASCADE)")
	opens := func() int64 {
		before := tableOpens(t, db)
		d, err := LoadTableDef(ctx, db, "d", "c")
		if err != nil {
			t.Fatal(err)
		}
		if len(d.ForeignKeys) != 1 || d.ForeignKeys[0].OnDelete != "CASCADE" {
			t.Fatalf("foreign keys of d.c: %+v", d.ForeignKeys)
		}
		p, err := LoadTableDef(ctx, db, "d", "p")
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Cascades) != 1 || p.Cascades[0].Child != "d.c" {
			t.Fatalf("cascades of d.p: %+v", p.Cascades)
		}
		return tableOpens(t, db) - before
	}
	var server int64
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES").Scan(&server); err != nil {
		t.Fatal(err)
	}
	few := opens()
	if few >= server/2 {
		t.Errorf("loading two tables opened %d tables; the server has %d", few, server)
	}
	const n = 40
	for i := range n {
		sandbox.MustExec(t, db, fmt.Sprintf("CREATE TABLE d.x%d (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES d2.q (id) ON DELETE CASCADE)", i),
			fmt.Sprintf("CREATE TABLE d2.e%d (id INT PRIMARY KEY)", i))
	}
	many := opens()
	t.Logf("table opens loading d.c and d.p: %d with %d tables on the server, %d with %d more", few, server, many, 2*n)
	if many-few > 3*2*n {
		t.Errorf("loading two tables opened %d tables with %d more in the user's schemas, %d without: more than 3 opens per table", many, 2*n, few)
	}
}
