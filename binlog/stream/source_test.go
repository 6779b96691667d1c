package stream

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

func TestCommitIDsFromGroupCommit(t *testing.T) {
	s := startSource(t, func(o *sandbox.Options) {
		o.CommitWaitCount = 4
		o.CommitWaitUsec = 200000
	})
	db := sandbox.MustOpen(t, s, "")
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				if _, err := db.Exec("INSERT INTO d.t VALUES (?, ?)", w*100+i, i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	txns := readFiles(t, s, fileset.Options{})
	if len(txns) != 42 {
		t.Fatalf("%d txns, want 42", len(txns))
	}
	groups := map[uint64]int{}
	for _, tx := range txns[2:] {
		if tx.CommitID != 0 {
			groups[tx.CommitID]++
			if tx.Flags&txn.FlagGroupCommitID == 0 {
				t.Errorf("commit id without FL_GROUP_COMMIT_ID: %s", describe(tx))
			}
		}
	}
	shared := 0
	for _, n := range groups {
		if n > 1 {
			shared++
		}
	}
	if shared == 0 {
		t.Fatalf("no two transactions share a commit id: %v", groups)
	}
	stream := readStream(t, streamConfig(s))
	if len(stream) != len(txns) {
		t.Fatalf("stream: %d txns, files %d", len(stream), len(txns))
	}
	for i := range txns {
		if stream[i].CommitID != txns[i].CommitID || stream[i].GTID != txns[i].GTID {
			t.Errorf("txn %d: stream %s / file %s", i, stream[i].GTID, txns[i].GTID)
		}
	}
}

func TestStopAtEnd(t *testing.T) {
	s := startSource(t, nil)
	db := sandbox.MustOpen(t, s, "")
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1)")
	all := readStream(t, streamConfig(s))
	if len(all) != 3 {
		t.Fatalf("%d txns, want 3", len(all))
	}
	last := all[len(all)-1]

	// Already at the end: by GTID and by position, io.EOF at once.
	for name, cfg := range map[string]Config{
		"gtid": func() Config { c := streamConfig(s); c.StartGTID = last.GTID; return c }(),
		"pos": func() Config {
			c := streamConfig(s)
			c.StartFile, c.StartPos = last.End.File, last.End.Offset
			return c
		}(),
	} {
		start := time.Now()
		if got := readStream(t, cfg); len(got) != 0 {
			t.Errorf("%s: %d txns at the end", name, len(got))
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: io.EOF took %v", name, d)
		}
	}

	// Idle source after a rotation: the end is past the last transaction,
	// reached through the new file's events.
	sandbox.MustExec(t, db, "FLUSH BINARY LOGS")
	for name, cfg := range map[string]Config{
		"gtid": func() Config { c := streamConfig(s); c.StartGTID = "0-1-2"; return c }(),
		"pos": func() Config {
			c := streamConfig(s)
			c.StartFile, c.StartPos = all[1].End.File, all[1].End.Offset
			return c
		}(),
	} {
		got := readStream(t, cfg)
		if len(got) != 1 || got[0].GTID != last.GTID {
			t.Errorf("%s after rotation: %d txns", name, len(got))
		}
	}
	// Without StopAtEnd the reader waits; a context deadline ends it.
	cfg := streamConfig(s)
	cfg.StopAtEnd = false
	cfg.StartGTID = last.GTID
	r, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next on an idle source: %v", err)
	}
	sandbox.MustExec(t, db, "INSERT INTO d.t VALUES (2)")
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	tx, err := r.Next(ctx2)
	if err != nil || tx.GTID != "0-1-4" || tx.Start.File != "binlog.000002" {
		t.Fatalf("Next after a new write: %v %v", tx, err)
	}
}

// damage copies the source's binlog to a temp dir and lets f change it.
func damage(t *testing.T, src string, f func([]byte) []byte) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestDamagedFiles(t *testing.T) {
	s := startSource(t, nil)
	runWorkload(t, s)
	files, _ := s.BinlogFiles()
	good := readFiles(t, s, fileset.Options{})
	all := good[9] // the all-types insert: a large rows event
	mid := (all.Start.Offset + all.End.Offset) / 2

	cases := []struct {
		name     string
		mutate   func([]byte) []byte
		wantTxns int
		offset   uint32
		msg      string
	}{
		{"truncated mid-event", func(b []byte) []byte { return b[:mid] }, 9, 0, "truncated event"},
		{"truncated after a GTID event", func(b []byte) []byte {
			gtidEnd := good[6].Start.Offset + binary.LittleEndian.Uint32(b[good[6].Start.Offset+9:])
			return b[:gtidEnd]
		}, 6, good[6].Start.Offset, "incomplete transaction"},
		{"flipped bytes", func(b []byte) []byte {
			c := append([]byte(nil), b...)
			for i := mid; i < mid+8; i++ {
				c[i] ^= 0xff
			}
			return c
		}, 9, 0, "checksum"},
		{"not a binlog", func(b []byte) []byte { return []byte("SELECT 1; -- not a binlog at all, just text\n") }, 0, 0, "not a binlog"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := damage(t, files[0], c.mutate)
			r, err := fileset.Open([]string{path}, fileset.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got, err := readUntilErr(r)
			var fe *binlog.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("after %d txns: %v, want a *FormatError", len(got), err)
			}
			if len(got) != c.wantTxns {
				t.Errorf("%d txns before the damage, want %d", len(got), c.wantTxns)
			}
			for i := range got {
				if got[i].GTID != good[i].GTID || got[i].End != good[i].End {
					t.Errorf("txn %d: %s", i, describe(got[i]))
				}
			}
			if fe.File != "binlog.000001" || !strings.Contains(err.Error(), "binlog.000001 at offset") || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q, want file and %q", err, c.msg)
			}
			if c.offset != 0 && fe.Offset != c.offset {
				t.Errorf("offset %d, want %d", fe.Offset, c.offset)
			}
			if c.wantTxns > 0 && c.offset == 0 && (fe.Offset < good[c.wantTxns-1].End.Offset || fe.Offset > mid) {
				t.Errorf("offset %d not between the last good txn end %d and the damage %d", fe.Offset, good[c.wantTxns-1].End.Offset, mid)
			}
			if c.msg == "incomplete transaction" && !errors.Is(err, binlog.ErrIncomplete) {
				t.Errorf("%v is not ErrIncomplete", err)
			}
			if _, err2 := r.Next(context.Background()); err2 != err {
				t.Errorf("Next after the error: %v", err2)
			}
		})
	}
}

func TestFilesAcrossRotation(t *testing.T) {
	s := startSource(t, nil)
	db := sandbox.MustOpen(t, s, "")
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1)",
		"FLUSH BINARY LOGS", "INSERT INTO d.t VALUES (2)", "FLUSH BINARY LOGS", "INSERT INTO d.t VALUES (3)")
	txns := readFiles(t, s, fileset.Options{})
	if len(txns) != 5 || txns[3].Start.File != "binlog.000002" || txns[4].End.File != "binlog.000003" {
		t.Fatalf("across files: %d txns", len(txns))
	}
	stream := readStream(t, streamConfig(s))
	if len(stream) != 5 || stream[3].Start != txns[3].Start || stream[4].End != txns[4].End {
		t.Fatalf("stream across files: %d txns", len(stream))
	}
	resumed := readFiles(t, s, fileset.Options{StartFile: txns[3].End.File, StartOffset: txns[3].End.Offset})
	if len(resumed) != 1 || resumed[0].GTID != txns[4].GTID || resumed[0].Seq != 1 {
		t.Fatalf("resume in the second file: %d txns", len(resumed))
	}
	if _, err := fileset.Open([]string{"x/binlog.000001"}, fileset.Options{StartFile: "binlog.000009"}); err == nil {
		t.Fatal("fileset.Open with an unknown start file succeeded")
	}
}

func TestStatementFormatRefused(t *testing.T) {
	s := startSource(t, func(o *sandbox.Options) { o.BinlogFormat = "STATEMENT" })
	db := sandbox.MustOpen(t, s, "")
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1)")
	_, err := Preflight(context.Background(), db)
	if err == nil || !strings.Contains(err.Error(), "binlog_format is STATEMENT") || !strings.Contains(err.Error(), "SET GLOBAL binlog_format=ROW") || !strings.Contains(err.Error(), "my.cnf") {
		t.Fatalf("Preflight: %v", err)
	}
	files, _ := s.BinlogFiles()
	r, err := fileset.Open(files, fileset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := readUntilErr(r)
	var fe *binlog.FormatError
	if len(got) != 2 || !errors.As(err, &fe) || !errors.Is(err, binlog.ErrNotRowBased) || fe.Offset == 0 || !strings.Contains(err.Error(), "binlog_format=ROW") {
		t.Fatalf("statement binlog: %d txns, %v", len(got), err)
	}
	if r.Flavor() != txn.MariaDB {
		t.Errorf("flavor %q", r.Flavor())
	}
}

func TestPreflight(t *testing.T) {
	s := startSource(t, func(o *sandbox.Options) { o.BinlogRowImage = "MINIMAL" })
	db := sandbox.MustOpen(t, s, "")
	warnings, err := Preflight(context.Background(), db)
	if err != nil || len(warnings) != 2 || !strings.Contains(warnings[0], "binlog_row_image is MINIMAL") || !strings.Contains(warnings[1], "binlog_row_metadata") {
		t.Fatalf("Preflight: %q %v", warnings, err)
	}
	if f, err := DetectFlavor(context.Background(), db); err != nil || f != txn.MariaDB {
		t.Fatalf("DetectFlavor: %q %v", f, err)
	}

	off := sandbox.MustStart(t, sandbox.Defaults())
	if _, err := Preflight(context.Background(), sandbox.MustOpen(t, off, "")); err == nil || !strings.Contains(err.Error(), "log_bin=OFF") {
		t.Fatalf("Preflight without a binlog: %v", err)
	}
}

// TestStreamEventTooBig: an event over --max-event-size from the source
// is refused before it is read, named by file, offset and GTID, after
// every transaction before it, also when reading it again once from the
// source (with reconnecting on).
func TestStreamEventTooBig(t *testing.T) {
	s := startSource(t, nil)
	db := sandbox.MustOpen(t, s, "")
	sandbox.MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, b LONGBLOB)",
		"INSERT INTO d.t VALUES (1, 'small')", "INSERT INTO d.t VALUES (2, REPEAT('x', 100000))", "INSERT INTO d.t VALUES (3, 'small')")
	all := readFiles(t, s, fileset.Options{})
	if len(all) != 5 {
		t.Fatalf("%d transactions in the files, want 5", len(all))
	}
	big := all[3]
	files, err := s.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	var rowsAt uint32 // the offset of the big transaction's rows event, from the file
	for _, f := range files {
		if filepath.Base(f) != big.Start.File {
			continue
		}
		if err := replication.NewBinlogParser().ParseFile(f, 4, func(ev *replication.BinlogEvent) error {
			start := ev.Header.LogPos - ev.Header.EventSize
			if ev.Header.EventType == replication.WRITE_ROWS_EVENTv1 && start > big.Start.Offset && start < big.End.Offset {
				rowsAt = start
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if rowsAt == 0 {
		t.Fatalf("no rows event in %s between %d and %d", big.Start.File, big.Start.Offset, big.End.Offset)
	}
	for _, reconnect := range []time.Duration{0, time.Minute} {
		cfg := streamConfig(s)
		cfg.Limits.MaxEvent = 64 << 10
		cfg.ReconnectTimeout = reconnect
		r, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readUntilErr(r)
		r.Close()
		var fe *binlog.FormatError
		if len(got) != 3 || !errors.As(err, &fe) || fe.GTID != big.GTID || fe.File != big.Start.File || fe.Offset != rowsAt ||
			!strings.Contains(err.Error(), "larger than --max-event-size 65536") {
			t.Errorf("reconnect %v: %d transactions, then %v; want 3, then the rows event at %s:%d of %s over the limit",
				reconnect, len(got), err, big.Start.File, rowsAt, big.GTID)
		}
		if reconnect > 0 && !strings.Contains(err.Error(), "read twice from the source") {
			t.Errorf("reconnect %v: %v; want it read again once", reconnect, err)
		}
	}
}

// TestQueryStringOutlivesItsResult: the text queryString returns is the
// caller's. go-mysql's GetString returns a string over the result's
// packet buffer, which Close gives back to a pool shared by every
// connection of the process; before resultString copied it, the next
// query of any connection overwrote it (the race detector caught a
// source's end GTID changing under a stream, two streams in one process).
func TestQueryStringOutlivesItsResult(t *testing.T) {
	src := sandbox.MustStart(t, sandbox.Defaults())
	conn := func() *client.Conn {
		c, err := client.Connect(fmt.Sprintf("127.0.0.1:%d", src.Port), "root", "", "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := conn(), conn()
	want := strings.Repeat("a", 40)
	got, err := queryString(a, "SELECT '"+want+"'")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := queryString(b, fmt.Sprintf("SELECT '%040d'", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got != want {
		t.Fatalf("queryString's result changed after other queries: %q, want %q", got, want)
	}
}
