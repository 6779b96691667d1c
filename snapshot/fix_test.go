package snapshot

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/prepl/prepl/tabledef"
)

// plain is a dialect whose statements are easy to read: values quoted
// as they are, generated columns (named g*) not written.
var plain = Dialect{
	Table:  func(t *tabledef.Table) string { return t.Schema + "." + t.Name },
	Column: func(n string) string { return n },
	Literal: func(c *tabledef.Column, v *string) (string, error) {
		if v == nil {
			return "NULL", nil
		}
		if *v == "bad" {
			return "", errors.New("bad value")
		}
		return "'" + *v + "'", nil
	},
	Writable:  func(c *tabledef.Column) bool { return !strings.HasPrefix(c.Name, "g") },
	Same:      func(col, lit string) string { return col + " <=> " + lit },
	DeleteOne: func(table, where string) string { return "DELETE FROM " + table + " WHERE " + where + " LIMIT 1" },
}

func TestFixChunk(t *testing.T) {
	str := func(s string) *string { return &s }
	row := func(vals ...string) []*string {
		r := make([]*string, len(vals))
		for i, v := range vals {
			if v != "NULL" {
				r[i] = str(v)
			}
		}
		return r
	}
	keyed := &tabledef.Table{Schema: "s", Name: "t", Columns: []tabledef.Column{{Name: "id"}, {Name: "a"}, {Name: "g"}},
		Indexes: []tabledef.Index{{Name: "PRIMARY", Primary: true, Columns: []string{"id"}}}}
	keyless := &tabledef.Table{Schema: "s", Name: "k", Columns: []tabledef.Column{{Name: "a"}, {Name: "b"}}}
	for _, c := range []struct {
		name      string
		def       *tabledef.Table
		src, dst  [][]*string
		want      []string
		unfixable int
	}{
		{"keyed: deletes, then updates, then inserts", keyed,
			[][]*string{row("1", "x", "2"), row("2", "y", "4")}, [][]*string{row("2", "z", "5"), row("3", "w", "6")},
			[]string{"DELETE FROM s.t WHERE id = '3'", "UPDATE s.t SET a = 'y' WHERE id = '2'", "INSERT INTO s.t (id, a) VALUES ('1', 'x')"}, 0},
		{"keyed: a NULL set, equal rows untouched", keyed,
			[][]*string{row("1", "NULL", "0"), row("2", "y", "4")}, [][]*string{row("1", "x", "0"), row("2", "y", "4")},
			[]string{"UPDATE s.t SET a = NULL WHERE id = '1'"}, 0},
		{"keyed: only a generated column differs", keyed,
			[][]*string{row("1", "x", "2")}, [][]*string{row("1", "x", "3")}, nil, 1},
		{"keyed: a value no literal says", keyed,
			[][]*string{row("1", "bad", "2")}, nil, nil, 1},
		{"key-less: a multiset, one copy deleted per extra copy", keyless,
			[][]*string{row("1", "x"), row("1", "x"), row("2", "NULL")}, [][]*string{row("1", "x"), row("3", "y"), row("3", "y")},
			[]string{"DELETE FROM s.k WHERE a <=> '3' AND b <=> 'y' LIMIT 1", "DELETE FROM s.k WHERE a <=> '3' AND b <=> 'y' LIMIT 1",
				"INSERT INTO s.k (a, b) VALUES ('1', 'x')", "INSERT INTO s.k (a, b) VALUES ('2', NULL)"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			f := NewFixWriter(&out)
			f.begin(plain)
			f.chunk(newTable(c.def, ""), c.src, c.dst)
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if !strings.HasPrefix(l, "--") {
					got = append(got, strings.TrimSuffix(l, ";"))
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") || f.Unfixable != c.unfixable || f.Statements != len(c.want) {
				t.Errorf("got (unfixable %d, statements %d):\n%s\nwant (unfixable %d):\n%s", f.Unfixable, f.Statements,
					strings.Join(got, "\n"), c.unfixable, strings.Join(c.want, "\n"))
			}
		})
	}
}
