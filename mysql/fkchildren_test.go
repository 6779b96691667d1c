package mysql

import (
	"context"
	"fmt"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestLoadTableDefChildrenFromDictionary: the foreign keys referencing a
// table, across schemas, with and without a cascading action, are found
// through InnoDB's dictionary, and loading the parent opens only its
// children: not one more open per table added to the user's schemas
// (information_schema alone opened every one of them).
func TestLoadTableDefChildrenFromDictionary(t *testing.T) {
	ctx := context.Background()
	s := sandbox.MustStart(t, sandbox.Defaults())
	db := sandbox.MustOpen(t, s, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE DATABASE d2",
		"CREATE TABLE d.p (id INT PRIMARY KEY)",
		"CREATE TABLE d.c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES d.p (id) ON DELETE CASCADE)",
		"CREATE TABLE d2.k (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES d.p (id))",
		"CREATE TABLE d.lone (id INT PRIMARY KEY)")
	if kids, ok := referencingTables(ctx, db, "d", "p"); !ok || len(kids) != 2 {
		t.Fatalf("children of d.p from the dictionary: %v %v, want d.c and d2.k", kids, ok)
	}
	opens := func() int64 {
		before := tableOpens(t, db)
		p, err := LoadTableDef(ctx, db, "d", "p")
		if err != nil {
			t.Fatal(err)
		}
		if !p.Referenced || len(p.Cascades) != 1 || p.Cascades[0].Child != "d.c" {
			t.Fatalf("d.p: referenced %v, cascades %+v; want referenced, d.c cascading", p.Referenced, p.Cascades)
		}
		lone, err := LoadTableDef(ctx, db, "d", "lone")
		if err != nil {
			t.Fatal(err)
		}
		if lone.Referenced || len(lone.Cascades) != 0 {
			t.Fatalf("d.lone: referenced %v, cascades %+v", lone.Referenced, lone.Cascades)
		}
		return tableOpens(t, db) - before
	}
	few := opens()
	for i := range 40 {
		sandbox.MustExec(t, db, fmt.Sprintf("CREATE TABLE d.x%d (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES d.lone (id) ON DELETE CASCADE)", i),
			fmt.Sprintf("DROP TABLE d.x%d", i), fmt.Sprintf("CREATE TABLE d.y%d (id INT PRIMARY KEY)", i), fmt.Sprintf("CREATE TABLE d2.e%d (id INT PRIMARY KEY)", i))
	}
	if many := opens(); many-few >= 40 {
		t.Errorf("loading d.p and d.lone opened %d tables with 80 more in the user's schemas, %d without", many, few)
	}
}
