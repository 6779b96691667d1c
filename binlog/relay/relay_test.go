package relay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/txn"
)

func pos(f string, o uint32) txn.Position { return txn.Position{File: f, Offset: o} }

func TestPurgeable(t *testing.T) {
	segs := []segment{{seq: 1, start: pos("b.000001", 4)}, {seq: 2, start: pos("b.000001", 900)}, {seq: 3, start: pos("b.000003", 300)}}
	for _, c := range []struct {
		applied txn.Position
		want    int
	}{
		{txn.Position{}, 0},        // nothing applied yet
		{pos("b.000001", 500), 0},  // inside the first file
		{pos("b.000001", 900), 1},  // at the second's start: the first is applied whole
		{pos("b.000002", 10), 1},   // inside the second
		{pos("b.000003", 300), 2},  // at the last's start: the last stays
		{pos("b.000009", 4), 2},    // past everything: the last stays
		{pos("b.000000", 9999), 0}, // before the log
	} {
		if got := purgeable(segs, c.applied); got != c.want {
			t.Errorf("purgeable at %s = %d, want %d", c.applied, got, c.want)
		}
	}
}

func TestHolds(t *testing.T) {
	segs := []segment{{seq: 1, start: pos("b.000002", 400)}, {seq: 2, start: pos("b.000003", 4)}}
	end := pos("b.000004", 800)
	for _, c := range []struct {
		p    txn.Position
		want bool
	}{
		{pos("b.000002", 400), true},
		{pos("b.000002", 399), false}, // before the log: read from the source
		{pos("b.000003", 100), true},
		{pos("b.000004", 800), true}, // at its end: nothing to apply from it, the stream resumes there
		{pos("b.000004", 801), false},
		{txn.Position{}, false}, // no file position stored
	} {
		if got := holds(segs, end, c.p); got != c.want {
			t.Errorf("holds(%s) = %v, want %v", c.p, got, c.want)
		}
	}
	if holds(nil, end, pos("b.000003", 4)) {
		t.Error("an empty log holds nothing")
	}
}

func TestParseIndex(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[int]string
	}{
		{"", map[int]string{}},
		{"relay.000001 0-1-5\nrelay.000002 -\n", map[int]string{1: "0-1-5", 2: ""}},
		{"relay.000001 0-1-5,1-2-7\nrelay.000002 0-1-9", map[int]string{1: "0-1-5,1-2-7"}}, // a line a crash cut
		{"junk\nrelay.000003 0-1-2\n", map[int]string{3: "0-1-2"}},
	} {
		got := parseIndex([]byte(c.in))
		if len(got) != len(c.want) {
			t.Errorf("parseIndex(%q) = %v, want %v", c.in, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("parseIndex(%q)[%d] = %q, want %q", c.in, k, got[k], v)
			}
		}
	}
}

// testBinlog is the binlog of testdata the relay files are made of.
var testBinlog = "crc32.000001"

// testEvents are the events of a MariaDB binlog with checksums: its
// format description, and the rest.
func testEvents(t *testing.T) (fde []byte, rest [][]byte) {
	t.Helper()
	b, err := os.ReadFile("../testdata/binlog/" + testBinlog)
	if err != nil {
		t.Fatal(err)
	}
	er := newEventReader(bytes.NewReader(b[4:]), 4)
	for {
		ev, err := er.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if fde == nil {
			fde = ev
			continue
		}
		rest = append(rest, ev)
	}
	return fde, rest
}

// writeRelay writes a relay file of the binlog's events as Fill would,
// and returns its path and the end of each event in it; an offset of the
// binlog plus shift is the same place in the relay file.
func writeRelay(t *testing.T, dir string) (string, []int64, int64) {
	t.Helper()
	fde, rest := testEvents(t)
	b := head(fde, 99, pos(testBinlog, 4))
	shift := int64(len(b)) - int64(4+len(fde))
	var ends []int64
	for _, ev := range rest {
		b = append(b, ev...)
		ends = append(ends, int64(len(b)))
	}
	p := path(dir, 1)
	if err := os.WriteFile(p, b, 0o640); err != nil {
		t.Fatal(err)
	}
	return p, ends, shift
}

// readAll reads the log's transactions to Fill's end.
func readAll(t *testing.T, l *Log) ([]*txn.Txn, error) {
	t.Helper()
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
	r := l.Reader(txn.Position{}, nil)
	defer r.Close()
	var out []*txn.Txn
	for {
		tx, err := r.Next(context.Background())
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, tx)
	}
}

// TestTornTailTruncated: a relay file cut anywhere keeps, after Open,
// exactly its complete transactions, and reads them back; its source's
// events with checksums or without.
func TestTornTailTruncated(t *testing.T) {
	for _, f := range []string{"crc32.000001", "nochecksum.000001"} {
		t.Run(f, func(t *testing.T) {
			testBinlog = f
			defer func() { testBinlog = "crc32.000001" }()
			tornTail(t)
		})
	}
}

func tornTail(t *testing.T) {
	dir := t.TempDir()
	p, ends, shift := writeRelay(t, dir)
	full, _ := os.ReadFile(p)
	l, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := readAll(t, l)
	if err != nil || len(whole) < 3 {
		t.Fatalf("read %d transactions: %v; want several", len(whole), err)
	}
	for _, cut := range []int64{ends[len(ends)-1] - 1, ends[len(ends)/2] + 7, ends[len(ends)/2], ends[0] + 3} {
		dir := t.TempDir()
		if err := os.WriteFile(path(dir, 1), full[:cut], 0o640); err != nil {
			t.Fatal(err)
		}
		l, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		got, err := readAll(t, l)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		// Every transaction ending at or before the cut is kept, none after.
		want := 0
		for _, tx := range whole {
			if int64(tx.End.Offset)+shift <= cut {
				want++
			}
		}
		if len(got) != want || len(got) > 0 && got[len(got)-1].GTID != whole[len(got)-1].GTID {
			t.Errorf("cut at %d: read %d transactions, want %d", cut, len(got), want)
		}
		fi, _ := os.Stat(path(dir, 1))
		if fi.Size() > cut {
			t.Errorf("cut at %d: file of %d bytes after Open", cut, fi.Size())
		}
	}
}

// TestDamagedEventNamesFileAndOffset: a flipped byte inside a relay file
// is refused by its checksum, naming the relay file and the offset.
func TestDamagedEventNamesFileAndOffset(t *testing.T) {
	dir := t.TempDir()
	p, ends, _ := writeRelay(t, dir)
	l, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	at := ends[1] + 25 // inside the third event
	b[at] ^= 0xff
	if err := os.WriteFile(p, b, 0o640); err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, l)
	var fe *binlog.FormatError
	if err == nil || !strings.Contains(err.Error(), filepath.Base(p)) || !strings.Contains(err.Error(), "offset") || !errors.As(err, &fe) && !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("err = %v; want a damaged event naming %s and its offset", err, p)
	}
}

func TestOverBound(t *testing.T) {
	old, now := time.Now().Add(-2*time.Hour), time.Now()
	two := []segment{{seq: 1, size: 600, first: old}, {seq: 2, size: 500, first: now}}
	for _, c := range []struct {
		name    string
		segs    []segment
		maxSize int64
		maxAge  time.Duration
		want    bool
	}{
		{"no bounds", two, 0, 0, false},
		{"under the size", two, 2000, 0, false},
		{"at the size", two, 1100, 0, true},
		{"one file never waits", two[1:], 100, 0, false}, // the applier reads the file being written: waiting would stall both
		{"younger than the age", two, 0, 3 * time.Hour, false},
		{"older than the age", two, 0, time.Hour, true},
		{"age unknown", []segment{{seq: 1}, {seq: 2}}, 0, time.Hour, false},
	} {
		l := &Log{opt: Options{MaxSize: c.maxSize, MaxAge: c.maxAge}, segs: c.segs}
		if got := l.overBound(); got != c.want {
			t.Errorf("%s: overBound = %v, want %v", c.name, got, c.want)
		}
	}
}
