package mysql_test

import (
	"testing"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// TestLongUniqueHiddenColumns: a long unique key (UNIQUE ... USING HASH,
// or on a BLOB) has a hidden hash column in MariaDB's row images, after
// row_start and row_end of a system-versioned table; a MEMORY table's
// hash index has none. The catalog counts them and takes row images of
// the binlog's width, cut to the target's columns (and the versioning
// columns), where it refused a system-versioned table's.
func TestLongUniqueHiddenColumns(t *testing.T) {
	srv := sandbox.MustStart(t, sandbox.Defaults())
	db := sandbox.MustOpen(t, srv, "")
	sandbox.MustExec(t, db, "CREATE DATABASE h",
		"CREATE TABLE h.sv (c INT, UNIQUE (c) USING HASH) WITH SYSTEM VERSIONING",
		"CREATE TABLE h.two (id INT PRIMARY KEY, b BLOB, c INT, UNIQUE (b), UNIQUE (c) USING HASH)",
		"CREATE TABLE h.mem (c INT, UNIQUE (c) USING HASH) ENGINE=MEMORY",
		"CREATE TABLE h.plain (c INT, UNIQUE (c))")
	ctx := t.Context()
	for name, want := range map[string]int{"sv": 1, "two": 2, "mem": 0, "plain": 0} {
		d, err := mysql.LoadTableDef(ctx, db, "h", name)
		if err != nil {
			t.Fatal(err)
		}
		if d.HashKeys != want {
			t.Errorf("h.%s: %d long unique keys, want %d", name, d.HashKeys, want)
		}
	}

	// c, row_start, row_end, DB_ROW_HASH_1, as the binlog has them.
	tb := &txn.Table{Schema: "h", Name: "sv", Types: []byte{txn.TypeLong, txn.TypeTimestamp2, txn.TypeTimestamp2, txn.TypeLongLong},
		Meta: []uint16{0, 6, 6, 0}}
	rc := &txn.RowChange{Kind: txn.Insert, Table: tb, After: []txn.Value{int64(0), "2026-01-01 00:00:00.000000", "2038-01-19 03:14:07.999999", int64(4172911582)}}
	cat := mysql.NewCatalog(db)
	if err := cat.LoadTxn(ctx, &txn.Txn{Changes: []txn.Change{{Row: rc}}}); err != nil {
		t.Fatal(err)
	}
	if len(rc.After) != 3 {
		t.Errorf("after image of %d columns, want 3: c, row_start, row_end", len(rc.After))
	}
}
