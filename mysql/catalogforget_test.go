package mysql

import (
	"slices"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestForgetDDL: which cached definitions a DDL forgets. The catalog
// holds d.p (parent of d.c, cascading, and of d.k, not cascading),
// d.c, d.k, d.lone, d.trg (with triggers) and e.x.
func TestForgetDDL(t *testing.T) {
	defs := func() map[string]*txn.TableDef {
		return map[string]*txn.TableDef{
			"d.p":    {Schema: "d", Name: "p", Referenced: true, Cascades: []txn.CascadeRef{{Child: "d.c", Name: "fc", OnDelete: true}}},
			"d.c":    {Schema: "d", Name: "c", ForeignKeys: []txn.ForeignKeyDef{{Name: "fc", RefSchema: "d", RefTable: "p"}}},
			"d.k":    {Schema: "d", Name: "k", ForeignKeys: []txn.ForeignKeyDef{{Name: "fk", RefSchema: "d", RefTable: "p"}}},
			"d.lone": {Schema: "d", Name: "lone"},
			"d.trg":  {Schema: "d", Name: "trg", HasTriggers: true},
			"e.x":    {Schema: "e", Name: "x"},
		}
	}
	all := []string{"d.c", "d.k", "d.lone", "d.p", "d.trg", "e.x"}
	for _, c := range []struct {
		name, sql, db string
		forgotten     []string
	}{
		{"a table alone", "ALTER TABLE e.x ADD v INT", "d", []string{"e.x"}},
		{"unqualified, in the default database", "ALTER TABLE lone ADD v INT", "d", []string{"d.lone"}},
		{"letter case", "TRUNCATE TABLE D.LONE", "", []string{"d.lone"}},
		{"a new foreign key: its parent", "ALTER TABLE e.x ADD FOREIGN KEY (id) REFERENCES d.lone (id) ON DELETE CASCADE", "", []string{"d.lone", "e.x"}},
		{"a new table's foreign key: its parent, and every parent (the old table's keys unknown)", "CREATE OR REPLACE TABLE e.n (id INT, FOREIGN KEY (id) REFERENCES d.lone (id))", "", []string{"d.lone", "d.p"}},
		{"a child's keys: its cached parent", "ALTER TABLE d.k DROP FOREIGN KEY fk", "", []string{"d.k", "d.p"}},
		{"a cascading child dropped", "DROP TABLE d.c", "", []string{"d.c", "d.p"}},
		{"a parent dropped: its children", "DROP TABLE d.p", "", []string{"d.c", "d.k", "d.p"}},
		{"a parent renamed: its children", "RENAME TABLE d.p TO d.p2", "", []string{"d.c", "d.k", "d.p"}},
		{"a parent renamed by ALTER", "ALTER TABLE d.p RENAME TO e.p", "", []string{"d.c", "d.k", "d.p"}},
		{"an index", "CREATE INDEX i ON d.lone (v)", "", []string{"d.lone"}},
		{"a trigger created: its table and the schema's tables with triggers", "CREATE TRIGGER g BEFORE INSERT ON lone FOR EACH ROW SET NEW.v = 1", "d", []string{"d.lone", "d.trg"}},
		{"a trigger dropped: the schema's tables with triggers", "DROP TRIGGER d.g", "", []string{"d.trg"}},
		{"a trigger dropped elsewhere", "DROP TRIGGER e.g", "", nil},
		{"a table not cached, without foreign keys known: every parent", "DROP TABLE e.unknown", "", []string{"d.p"}},
		{"a database dropped: all", "DROP DATABASE e", "", all},
		{"a routine: all", "CREATE PROCEDURE d.r() BEGIN END", "", all},
		{"ALTER DATABASE: all", "ALTER DATABASE d CHARACTER SET utf8mb4", "", all},
		{"not parsed with certainty: all", "ALTER TABLE e.x COMMENT \"x\"", "", all},
		{"an executable comment: all", "ALTER TABLE e.x /*!100000 ADD v INT */", "", all},
		{"an unknown statement: all", "GRANT ALL ON *.* TO u", "", all},
		{"unqualified without a default database: all", "ALTER TABLE x ADD v INT", "", all},
	} {
		cat := NewCatalog(nil)
		cat.tables = defs()
		tm := &txn.Table{Schema: "d", Name: "p"}
		cat.typed[tm] = cat.tables["d.p"]
		cat.ForgetDDL(c.sql, c.db)
		var gone []string
		for _, k := range all {
			if _, ok := cat.Table(splitName(k)); !ok {
				gone = append(gone, k)
			}
		}
		if !slices.Equal(gone, c.forgotten) {
			t.Errorf("%s: %q forgot %v, want %v", c.name, c.sql, gone, c.forgotten)
		}
		if _, typed := cat.typed[tm]; typed == slices.Contains(gone, "d.p") {
			t.Errorf("%s: d.p forgotten %v but its table map still checked %v", c.name, slices.Contains(gone, "d.p"), typed)
		}
	}
}

func splitName(k string) (string, string) {
	for i := range len(k) {
		if k[i] == '.' {
			return k[:i], k[i+1:]
		}
	}
	return "", k
}
