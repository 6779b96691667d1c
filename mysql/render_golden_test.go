package mysql_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/render")

// goldenSchema has a table with a primary key, one without any key, and
// the trigger tables of triggerSchema.
var goldenSchema = append([]string{
	"CREATE DATABASE g",
	"CREATE TABLE g.t (id INT PRIMARY KEY, v INT, s VARCHAR(20))",
	"CREATE TABLE g.nokey (a INT, b VARCHAR(10))",
}, triggerSchema...)

// TestRenderGolden compares the SQL the target renders for each kind of
// commit unit with testdata/render/*.sql (go test -run TestRenderGolden
// ./mysql/ -update rewrites them; review the diff). The transactions come
// from a real source's binlog.
func TestRenderGolden(t *testing.T) {
	ctx := context.Background()
	o := sandbox.Defaults()
	o.Binlog = true
	src := sandbox.MustStart(t, o)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, goldenSchema...)
	// Each group below is one source transaction, in binlog order.
	groups := [][]string{
		{"INSERT INTO g.t VALUES (1, 10, 'a')"},
		{"UPDATE g.t SET v = 11 WHERE id = 1"},
		{"DELETE FROM g.t WHERE id = 1"},
		{"INSERT INTO g.t VALUES (2, 20, 'b'), (3, 30, 'c'), (4, 40, 'd')"},
		{"UPDATE g.t SET v = v + 1 WHERE id IN (2, 3)"},
		{"DELETE FROM g.t WHERE id = 4"},
		{"BEGIN", "INSERT INTO g.t VALUES (6, 60, 'f')", "UPDATE g.t SET s = 'bb' WHERE id = 2", "COMMIT"},
		{"INSERT INTO g.nokey VALUES (1, 'x'), (1, 'x'), (2, 'y')"},
		{"UPDATE g.nokey SET b = 'z' WHERE a = 2"},
		{"DELETE FROM g.nokey WHERE a = 1 LIMIT 1"},
		{"BEGIN", "INSERT INTO tg.plain VALUES (1, 1)", "INSERT INTO tg.t (id, v) VALUES (1, 10)", "COMMIT"},
		{"INSERT INTO tg.plain VALUES (2, 2)"},
		{"XA START 'x1'", "INSERT INTO g.t VALUES (7, 70, 'g')", "XA END 'x1'", "XA PREPARE 'x1'"},
		{"XA COMMIT 'x1'"},
		{"XA START 'x2'", "INSERT INTO g.t VALUES (8, 80, 'h')", "XA END 'x2'", "XA COMMIT 'x2' ONE PHASE"},
	}
	for _, g := range groups {
		sandbox.MustExec(t, sdb, g...)
	}
	txs := readTxns(t, src)
	if len(txs) != len(groups) {
		var ids []string
		for _, tx := range txs {
			ids = append(ids, tx.ID())
		}
		t.Fatalf("the binlog holds %d row transactions, want %d (one per group): %v", len(txs), len(groups), ids)
	}

	o = sandbox.Defaults()
	o.ServerID = 2
	dst := sandbox.MustStart(t, o)
	ddb := sandbox.MustOpen(t, dst, "")
	sandbox.MustExec(t, ddb, goldenSchema...)
	tgt := openTarget(t, dst, dst.URL())
	sqlRows := openTarget(t, dst, dst.URL(), mysql.SQLRows())
	defer mysql.SetMinEventRows(1)() // compacted-row-events has 3
	e, err := mysql.ParseURL(dst.URL())
	if err != nil {
		t.Fatal(err)
	}
	keep, err := mysql.Open(ctx, e, "keep", mysql.KeepGTIDs())
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	for _, tx := range txs {
		for _, c := range []*mysql.Target{tgt, sqlRows, keep} {
			if err := c.Catalog.LoadTxn(ctx, tx); err != nil {
				t.Fatal(err)
			}
		}
	}

	cases := []struct {
		name    string
		tgt     *mysql.Target
		unit    []*txn.Txn
		compact bool
	}{
		{"insert", tgt, txs[0:1], true},
		{"update", tgt, txs[1:2], true},
		{"delete", tgt, txs[2:3], true},
		// Rows that existed before the unit: overwritten (upsert) or
		// deleted by key; a new row inserted; one changed twice.
		{"compacted", sqlRows, txs[4:7], true},
		// The same as rows events, the binlog's images (rowevents.go):
		// the deletes still by key.
		{"compacted-row-events", tgt, txs[4:7], true},
		{"uncompacted", tgt, txs[4:7], false},
		// No key: every column compared with <=>, one row at a time.
		{"keyless", tgt, txs[7:10], true},
		// A table with triggers on the target: that member goes as BINLOG
		// statements, the others as SQL.
		{"triggers", tgt, txs[10:12], true},
		{"keep-gtid", keep, txs[0:1], true},
		{"xa-commit", tgt, txs[13:14], true},
		{"xa-one-phase", tgt, txs[14:15], true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := c.tgt.Render(ctx, c.unit, c.compact)
			if err != nil {
				t.Fatal(err)
			}
			var head strings.Builder
			head.WriteString("-- " + c.name + ":")
			for _, tx := range c.unit {
				head.WriteString(" " + tx.ID())
			}
			got := head.String() + "\n" + b.(fmt.Stringer).String()
			path := filepath.Join("testdata", "render", c.name+".sql")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from what the target renders:\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}
