package binlog

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// storedEvents returns tx's row events as a target stores them for a
// prepared XA transaction: its BINLOG statements' events, back to back.
func storedEvents(t *testing.T, tx *txn.Txn) []byte {
	t.Helper()
	rows := *tx
	rows.Changes = nil
	for _, ch := range tx.Changes {
		if ch.Row != nil {
			rows.Changes = append(rows.Changes, ch)
		}
	}
	stmts, err := mysql.BinlogStatements(&rows)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, q := range stmts {
		ev, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(q, "BINLOG '"), "'"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev...)
	}
	return out
}

// TestDecodeEventsRoundTrip: the events of a prepared XA transaction,
// stored and decoded, give back its row changes, raw events kept.
func TestDecodeEventsRoundTrip(t *testing.T) {
	s := startSource(t, func(o *sandbox.Options) { o.BinlogRowMetadata = "FULL" })
	db := sandbox.MustOpen(t, s, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, "CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20), u BIGINT UNSIGNED)",
		"CREATE TABLE d.w (id INT PRIMARY KEY, b BLOB)",
		"INSERT INTO d.t VALUES (1, 'one', 1), (2, 'two', 2)",
		"XA START 'x'",
		"INSERT INTO d.t VALUES (3, 'three', 18446744073709551615)",
		"UPDATE d.t SET v = 'uno' WHERE id = 1",
		"INSERT INTO d.w VALUES (1, X'00FF')",
		"DELETE FROM d.t WHERE id = 2",
		"XA END 'x'", "XA PREPARE 'x'", "XA COMMIT 'x'")
	var prep *txn.Txn
	for _, tx := range readFiles(t, s) {
		if tx.XA && tx.Rows() > 0 {
			prep = tx
		}
	}
	if prep == nil {
		t.Fatal("no prepared XA transaction read")
	}
	got, err := DecodeEvents(prep.Format.Event, storedEvents(t, prep))
	if err != nil {
		t.Fatal(err)
	}
	want := rowsOf(prep)
	have := rowsOf(got)
	if len(have) != len(want) {
		t.Fatalf("decoded %d row changes, want %d", len(have), len(want))
	}
	for i := range want {
		w, h := want[i], have[i]
		if h.Kind != w.Kind || h.Table.QualifiedName() != w.Table.QualifiedName() || !reflect.DeepEqual(h.Before, w.Before) ||
			!reflect.DeepEqual(h.After, w.After) || !reflect.DeepEqual(h.Table.Names, w.Table.Names) || h.Event == nil {
			t.Errorf("row %d: decoded %s %s %v -> %v, want %s %s %v -> %v", i, h.Kind, h.Table.QualifiedName(), h.Before, h.After,
				w.Kind, w.Table.QualifiedName(), w.Before, w.After)
		}
	}
	if got.Format == nil || string(got.Format.Event) != string(prep.Format.Event) {
		t.Error("decoded transaction lacks the format description it was decoded with")
	}
	if got, err := DecodeEvents(prep.Format.Event, nil); err != nil || got.Rows() != 0 {
		t.Errorf("no events: %v rows, err %v; want none, no error", got.Rows(), err)
	}

	// Damaged stored events are errors, never a panic or a partial result.
	ev := storedEvents(t, prep)
	first := int(uint32(ev[9]) | uint32(ev[10])<<8 | uint32(ev[11])<<16 | uint32(ev[12])<<24)
	flipped := append([]byte(nil), ev...)
	flipped[first/2] ^= 0xFF
	query := append([]byte(nil), ev[:first]...)
	query[4] = 2 // QUERY_EVENT
	for _, c := range []struct {
		name           string
		format, events []byte
	}{
		{"no format description", nil, ev},
		{"a table map as format description", ev[:first], ev},
		{"truncated", prep.Format.Event, ev[:len(ev)-3]},
		{"less than a header left", prep.Format.Event, append(append([]byte(nil), ev...), 1, 2, 3)},
		{"checksum mismatch", prep.Format.Event, flipped},
		{"a query event", prep.Format.Event, query},
		{"rows without their table map", prep.Format.Event, ev[first:]},
	} {
		if _, err := DecodeEvents(c.format, c.events); err == nil {
			t.Errorf("%s: decoded without error", c.name)
		}
	}
}
