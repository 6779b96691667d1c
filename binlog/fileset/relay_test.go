package fileset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// relayLogs runs a workload on a source and returns its transactions as
// read from its binlogs, and the relay log files of a real MariaDB
// replica that fetched them (I/O thread only, relay logs of 4 KiB at
// most, so that transactions and statements go on from one file into
// the next).
func relayLogs(t *testing.T) (want []*txn.Txn, relays []string) {
	t.Helper()
	src := startSource(t, nil)
	rep := sandbox.MustStart(t, sandbox.RelayReplica())
	sdb, rdb := sandbox.MustOpen(t, src, ""), sandbox.MustOpen(t, rep, "")
	sandbox.MustExec(t, sdb, "CREATE DATABASE r", "CREATE TABLE r.t (id INT PRIMARY KEY, v VARCHAR(400), n INT)",
		"INSERT INTO r.t VALUES (1, 'one', 1), (2, 'two', 2)",
		// 400 rows of ~130 bytes in one statement: a rows event per
		// 8 KiB, each past a relay file of 4 KiB.
		"INSERT INTO r.t SELECT seq, REPEAT(CHAR(64 + seq % 26), 120), seq FROM mysql.seq_10_to_409",
		"UPDATE r.t SET n = n + 1 WHERE id < 100",
		"ALTER TABLE r.t ADD COLUMN w INT DEFAULT 7",
		"DELETE FROM r.t WHERE id BETWEEN 200 AND 250",
		"CREATE TABLE r.m (id INT PRIMARY KEY) ENGINE=MyISAM", "INSERT INTO r.m VALUES (1), (2)")
	tx, err := sdb.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		if _, err := tx.Exec("UPDATE r.t SET v = CONCAT(v, ?) WHERE id = ?", strings.Repeat("z", 100), 10+i); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var pos string
	if err := sdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	sandbox.MustExec(t, rdb, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = %d, MASTER_USER = 'root', "+
		"MASTER_USE_GTID = slave_pos", src.Port), "START SLAVE IO_THREAD")
	sandbox.MustWaitFetched(t, rdb, pos, 30*time.Second)
	sandbox.MustExec(t, rdb, "STOP SLAVE IO_THREAD")
	relays, err = filepath.Glob(filepath.Join(rep.DataDir(), "relay-bin.0*"))
	if err != nil || len(relays) < 10 {
		t.Fatalf("relay logs: %v %v; want many", relays, err)
	}
	return readFiles(t, src, Options{}), relays
}

// sameTxns fails unless got and want hold the same transactions: GTIDs,
// statements and row images.
func sameTxns(t *testing.T, got, want []*txn.Txn) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d transactions, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.GTID != w.GTID || len(g.Changes) != len(w.Changes) {
			t.Fatalf("transaction %d: %s with %d changes, want %s with %d", i, g.GTID, len(g.Changes), w.GTID, len(w.Changes))
		}
		for j := range w.Changes {
			gc, wc := g.Changes[j], w.Changes[j]
			switch {
			case wc.Stmt != nil:
				if gc.Stmt == nil || gc.Stmt.SQL != wc.Stmt.SQL {
					t.Fatalf("%s change %d: %+v, want statement %q", w.GTID, j, gc, wc.Stmt.SQL)
				}
			case gc.Row == nil || gc.Row.Kind != wc.Row.Kind || !reflect.DeepEqual(gc.Row.Before, wc.Row.Before) ||
				!reflect.DeepEqual(gc.Row.After, wc.Row.After):
				t.Fatalf("%s change %d differs: %+v, want %+v", w.GTID, j, gc.Row, wc.Row)
			}
		}
	}
}

func readPaths(paths []string) ([]*txn.Txn, error) {
	r, err := Open(paths, Options{})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readUntilErr(r)
}

// TestRelayLogs: the relay logs of a real MariaDB replica, rotated every
// 4 KiB (inside transactions and statements), read as the source's
// binlogs read: the same transactions, each at its relay log offsets.
// Given from a file that begins inside a transaction, they are refused
// (the transaction's start is in the file not given); a transaction cut
// short and sent again, as after a reconnect of the I/O thread, is read
// once.
func TestRelayLogs(t *testing.T) {
	want, relays := relayLogs(t)
	got, err := readPaths(relays)
	if !isEOF(err) {
		t.Fatalf("relay logs: %v after %d transactions", err, len(got))
	}
	sameTxns(t, got, want)
	spans := 0
	for _, tx := range got {
		if !strings.HasPrefix(tx.Start.File, "relay-bin.") || !strings.HasPrefix(tx.End.File, "relay-bin.") {
			t.Fatalf("%s at %s..%s: want relay log positions", tx.GTID, tx.Start, tx.End)
		}
		st, err := os.Stat(filepath.Join(filepath.Dir(relays[0]), tx.End.File))
		if err != nil || int64(tx.End.Offset) > st.Size() {
			t.Fatalf("%s ends at %s, past its file (%v)", tx.GTID, tx.End, err)
		}
		if tx.Start.File != tx.End.File {
			spans++
			if tx.Size <= int(tx.End.Offset) {
				t.Errorf("%s spans %s..%s but its size, %d, is no more than its part in the last file", tx.GTID, tx.Start, tx.End, tx.Size)
			}
		}
	}
	if spans == 0 {
		t.Fatal("no transaction goes on from one relay log into the next: the test proves nothing")
	}

	// A file left out where a transaction goes on: refused by the reader
	// itself, whatever the continuity check said (--allow-gaps).
	for _, tx := range got {
		if tx.Start.File == tx.End.File {
			continue
		}
		var holed []string
		for i, p := range relays {
			if i > 0 && filepath.Base(relays[i-1]) == tx.Start.File {
				continue // the file after the one the transaction starts in
			}
			holed = append(holed, p)
		}
		_, err := readPaths(holed)
		var fe *binlog.FormatError
		if !errors.As(err, &fe) || fe.GTID != tx.GTID || !strings.Contains(err.Error(), "goes on in ") {
			t.Fatalf("relay logs without the file after %s: %v; want %s refused, it goes on in the file left out", tx.Start.File, err, tx.GTID)
		}
		break
	}

	// Continuity: by names and rotates; one missing is a gap.
	var sums []FileSummary
	for _, p := range relays {
		s, err := ScanFile(p)
		empty := len(events(t, mustRead(t, p))) <= 2 // the replica's format description and rotate: nothing of the source
		if err != nil || s.Relay == empty || s.HasGTIDList {
			t.Fatalf("scan %s: %+v %v; want a relay log, its source's GTID list not taken for its start", p, s, err)
		}
		sums = append(sums, s)
	}
	if ps := CheckContinuity(sums); len(ps) != 0 {
		t.Fatalf("relay logs in order: %v", ps)
	}
	gap := append(append([]FileSummary{}, sums[:3]...), sums[4:]...)
	if ps := CheckContinuity(gap); len(ps) == 0 || ps[0].Kind != Gap || !strings.Contains(ps[0].Msg, sums[3].Name) {
		t.Fatalf("relay logs without %s: %v; want a gap naming it", sums[3].Name, ps)
	}

	// From a file that begins inside a transaction.
	for i, p := range relays {
		if i > 0 && beginsInside(t, p) {
			_, err := readPaths(relays[i:])
			var fe *binlog.FormatError
			if !errors.As(err, &fe) || fe.File != filepath.Base(p) || !strings.Contains(err.Error(), "begins inside a transaction") {
				t.Fatalf("from %s: %v; want the file refused as beginning inside a transaction", p, err)
			}
			break
		}
	}

	// A transaction cut short, the source's rotate and format
	// description, then the transaction whole again.
	dir := t.TempDir()
	copied := make([]string, len(relays))
	for i, p := range relays {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		copied[i] = filepath.Join(dir, filepath.Base(p))
		if err := os.WriteFile(copied[i], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var reconnect [][]byte // the source's rotate and format description, as the I/O thread writes them when it connects
	for _, p := range relays {
		if h := events(t, mustRead(t, p)); len(h) > 2 && binlog.RelayHead(h[0], h[1]) && replication.EventType(h[2][4]) == replication.FORMAT_DESCRIPTION_EVENT {
			reconnect = [][]byte{h[1], h[2]}
			break
		}
	}
	if reconnect == nil {
		t.Fatal("no relay log holds the source's rotate and format description")
	}
	target, evs, gi := "", [][]byte(nil), -1
	for _, p := range copied {
		evs = events(t, mustRead(t, p))
		for i, ev := range evs {
			if replication.EventType(ev[4]) == replication.MARIADB_GTID_EVENT && i+2 < len(evs) {
				target, gi = p, i
			}
		}
		if target != "" {
			break
		}
	}
	if target == "" {
		t.Fatal("no GTID event in the relay logs")
	}
	spliced := append(append(append(append([][]byte{}, evs[:gi]...), evs[gi:gi+2]...), reconnect...), evs[gi:]...)
	writeEvents(t, target, spliced)
	got, err = readPaths(copied)
	if !isEOF(err) {
		t.Fatalf("relay logs with a transaction sent again: %v after %d transactions", err, len(got))
	}
	sameTxns(t, got, want)

	// Cut short and not sent again: the next transaction is another.
	next := -1
	for i := gi + 1; i < len(evs); i++ {
		if replication.EventType(evs[i][4]) == replication.MARIADB_GTID_EVENT {
			next = i
			break
		}
	}
	if next > 0 {
		lost := append(append(append(append([][]byte{}, evs[:gi]...), evs[gi:gi+2]...), reconnect...), evs[next:]...)
		writeEvents(t, target, lost)
		_, err = readPaths(copied)
		var fe *binlog.FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "no commit before the next GTID") {
			t.Fatalf("a transaction cut short and not sent again: %v; want an error", err)
		}
	}
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// events splits a binlog file into its events (the magic number left out).
func events(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for off := 4; off < len(b); {
		n := int(binary.LittleEndian.Uint32(b[off+9:]))
		if n < replication.EventHeaderSize || off+n > len(b) {
			t.Fatalf("event at %d of %d bytes in a file of %d", off, n, len(b))
		}
		out = append(out, b[off:off+n])
		off += n
	}
	return out
}

func writeEvents(t *testing.T, p string, evs [][]byte) {
	t.Helper()
	b := bytes.Clone(replication.BinLogFileHeader)
	for _, ev := range evs {
		b = append(b, ev...)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// beginsInside reports whether relay log p has an event of a transaction
// before its first GTID event.
func beginsInside(t *testing.T, p string) bool {
	for _, ev := range events(t, mustRead(t, p)) {
		switch replication.EventType(ev[4]) {
		case replication.MARIADB_GTID_EVENT:
			return false
		case replication.TABLE_MAP_EVENT, replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1,
			replication.DELETE_ROWS_EVENTv1, replication.XID_EVENT:
			return true
		}
	}
	return false
}
