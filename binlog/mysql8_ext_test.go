package binlog_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/txn"
)

// TestMySQL84TaggedGTIDFullMetadataPartialJSON reads partialFile (see
// mysql8_test.go) with binlog/fileset's reader and scan.
func TestMySQL84TaggedGTIDFullMetadataPartialJSON(t *testing.T) {
	b, bad := binlog.PartialFile()
	path := filepath.Join(t.TempDir(), "binlog.000001")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	const gtid8 = "3e11fa47-71ca-11e1-9e33-c80aa9429562:pitr:8"

	// Without a choice, the reader stops before the transaction that
	// cannot be applied, naming it by GTID and file:offset.
	txns, err := readFile(t, path, fileset.Options{})
	var fe *binlog.FormatError
	if !errors.As(err, &fe) || !errors.Is(err, binlog.ErrPartialJSON) || fe.GTID != gtid8 || fe.Offset != bad ||
		!strings.Contains(err.Error(), "--skip-gtid "+gtid8) {
		t.Fatalf("want a FormatError for GTID %s at %d saying --skip-gtid, got %v", gtid8, bad, err)
	}
	if len(txns) != 1 {
		t.Fatalf("%d transactions before the error, want 1", len(txns))
	}
	tx := txns[0]
	if tx.GTID != "3e11fa47-71ca-11e1-9e33-c80aa9429562:pitr:7" || tx.SeqNo != 7 {
		t.Errorf("tagged GTID read as %q (seq %d)", tx.GTID, tx.SeqNo)
	}
	rows := binlog.RowsOf(tx)
	if len(rows) != 2 {
		t.Fatalf("%d row changes, want 2", len(rows))
	}
	tb := rows[0].Table
	if strings.Join(tb.Names, ",") != "id,j,name" || len(tb.PrimaryKey) != 1 || tb.PrimaryKey[0] != 0 ||
		tb.Unsigned == nil || !tb.Unsigned[0] || tb.Collations == nil || tb.Collations[2] != 255 {
		t.Errorf("full row metadata read as names %v key %v unsigned %v collations %v", tb.Names, tb.PrimaryKey, tb.Unsigned, tb.Collations)
	}
	for _, c := range []struct {
		got  txn.Value
		want string
	}{
		{rows[0].After[1], `{"a":1,"b":[1,2]}`}, // go-mysql's rendering
		{rows[1].Before[1], `{"a":1,"b":[1,2]}`},
		{rows[1].After[1], `{"a":5,"b":[2],"c":"new"}`},
		{rows[1].After[2], `y`},
	} {
		if b, ok := c.got.([]byte); !ok || string(b) != c.want {
			t.Errorf("got %v (%T), want %s", c.got, c.got, c.want)
		}
	}

	// --skip-gtid (or --skip-position) leaves it out: it comes with no
	// changes, and the transaction after it is read.
	for _, skip := range []func(string, txn.Position) bool{
		func(g string, _ txn.Position) bool { return g == gtid8 },
		func(_ string, p txn.Position) bool { return p == txn.Position{File: "binlog.000001", Offset: bad} },
	} {
		txns, err = readFile(t, path, fileset.Options{Skip: skip})
		if err != nil || len(txns) != 3 || len(txns[1].Changes) != 0 || txns[1].GTID != gtid8 || len(binlog.RowsOf(txns[2])) != 1 {
			t.Fatalf("with the skip: %d transactions, err %v", len(txns), err)
		}
	}

	// The file-set scan counts tagged GTIDs under uuid:tag, and gives
	// each GTID in the form the transactions carry.
	var seen []string
	sum, err := fileset.ScanFileFor(path, func(g string) { seen = append(seen, g) })
	if err != nil || sum.MySQLHeld.String() != "3e11fa47-71ca-11e1-9e33-c80aa9429562:pitr:7-9" {
		t.Fatalf("scan: %v %v", sum.MySQLHeld, err)
	}
	if len(seen) != 3 || seen[1] != gtid8 {
		t.Errorf("scan: GTIDs %q, want 3 with %s second", seen, gtid8)
	}
}

func readFile(t *testing.T, path string, opt fileset.Options) ([]*txn.Txn, error) {
	t.Helper()
	r, err := fileset.Open([]string{path}, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []*txn.Txn
	for {
		tx, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, tx)
	}
}
