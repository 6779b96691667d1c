package binlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// seedBinlogs are the committed binlogs of testdata/gen (MariaDB, one with
// CRC32 checksums, one with binlog_checksum=NONE).
var seedBinlogs = []string{"testdata/binlog/crc32.000001", "testdata/binlog/nochecksum.000001"}

func readSeed(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// event is one event's place in a binlog file.
type event struct {
	off, size int
	typ       replication.EventType
}

// eventsOf lists the events of a well-formed binlog file.
func eventsOf(t testing.TB, b []byte) []event {
	t.Helper()
	var evs []event
	for off := 4; off+replication.EventHeaderSize <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off+9:]))
		if n < replication.EventHeaderSize || off+n > len(b) {
			t.Fatalf("seed binlog: bad event at %d", off)
		}
		evs = append(evs, event{off, n, replication.EventType(b[off+4])})
		off += n
	}
	return evs
}

func firstEvent(t testing.TB, evs []event, types ...replication.EventType) event {
	t.Helper()
	for _, e := range evs {
		for _, typ := range types {
			if e.typ == typ {
				return e
			}
		}
	}
	t.Fatalf("no %v event in the seed binlog", types)
	return event{}
}

// hasCRC reports whether the binlog's format description says CRC32.
func hasCRC(b []byte) bool {
	n := int(binary.LittleEndian.Uint32(b[4+9:]))
	return b[4+n-5] == byte(replication.BINLOG_CHECKSUM_ALG_CRC32)
}

// fixCRC recomputes the checksum of every event it can walk to, as a
// damaged binlog that passes checksums would have them.
func fixCRC(b []byte) []byte {
	if len(b) < 4+replication.EventHeaderSize || !hasCRCSafe(b) {
		return b
	}
	for off := 4; off+replication.EventHeaderSize <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off+9:]))
		if n < replication.EventHeaderSize+4 || off+n > len(b) {
			break
		}
		ev := b[off : off+n]
		saved := ev[17]
		if ev[4] == byte(replication.FORMAT_DESCRIPTION_EVENT) {
			ev[17] &^= logEventBinlogInUse
		}
		binary.LittleEndian.PutUint32(ev[n-4:], crc32.ChecksumIEEE(ev[:n-4]))
		ev[17] = saved
		off += n
	}
	return b
}

func hasCRCSafe(b []byte) bool {
	n := int(binary.LittleEndian.Uint32(b[4+9:]))
	return n >= 5+replication.EventHeaderSize && 4+n <= len(b) && hasCRC(b)
}

// decodeBytes runs the file reader's decoding on b, as the file name, to
// the first error: the transactions before it and the error (nil at a
// clean end).
func decodeBytes(name string, b []byte, lim Limits) ([]*txn.Txn, error) {
	d := NewDecoder(lim, nil)
	var txns []*txn.Txn
	send := func(t *txn.Txn) bool { txns = append(txns, t); return true }
	err := d.DecodeFile(context.Background(), name, bytes.NewReader(b), int64(len(b)), 4, send)
	return txns, d.EndFile(err, "next")
}

// allocated returns the bytes f allocated.
//
// The metric is the process's: under -fuzz, the fuzzing engine's own
// goroutines allocate beside f (a 396-byte input once measured 1.51 MB
// against its cap of 1.45 MB, and passed run alone). f's allocations are
// the same every time it runs, so allocated runs it again, up to three
// times in all, while the measure is over 1 MiB, and returns the least.
func allocated(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	least := uint64(math.MaxUint64)
	for range 3 {
		metrics.Read(s)
		before := s[0].Value.Uint64()
		f()
		metrics.Read(s)
		least = min(least, s[0].Value.Uint64()-before)
		if least <= 1<<20 {
			break
		}
	}
	return least
}

// TestGoMySQLZeroColumnCountUnbounded documents the go-mysql bug the guard
// exists for (reported upstream with zeroColumnRepro as the reproducer):
// its rows decoder, given a rows event whose column count is 0, appends
// empty rows forever. It runs in a child process that reports once its
// heap passes 256 MiB, so the bug cannot take the test binary down. If
// this fails because decoding returned, go-mysql has fixed it.
func TestGoMySQLZeroColumnCountUnbounded(t *testing.T) {
	if os.Getenv("PREPL_REPRO_CHILD") == "1" {
		zeroColumnChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoMySQLZeroColumnCountUnbounded$")
	cmd.Env = append(os.Environ(), "PREPL_REPRO_CHILD=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(string(out), "UNBOUNDED") {
		t.Fatalf("go-mysql decoding a zero-column rows event: %v\n%s", err, out)
	}
	// The same events through prepl's guard: an error, not a loop.
	g := newGuard(Limits{})
	var derr error
	for _, raw := range zeroColumnRepro() {
		if _, derr = g.decode(raw); derr != nil {
			break
		}
	}
	if derr == nil || !strings.Contains(derr.Error(), "column count 0") {
		t.Fatalf("guarded decoding: %v, want a column count error", derr)
	}
}

func zeroColumnChild() {
	go func() {
		p := replication.NewBinlogParser()
		for _, raw := range zeroColumnRepro() {
			if _, err := p.Parse(raw); err != nil {
				fmt.Println("RETURNED", err)
				os.Exit(0)
			}
		}
		fmt.Println("RETURNED")
		os.Exit(0)
	}()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for {
		runtime.Gosched()
		metrics.Read(s)
		if v := s[0].Value.Uint64(); v > 256<<20 {
			fmt.Println("UNBOUNDED", v)
			os.Exit(3)
		}
	}
}

// zeroColumnRepro is the minimal reproducer of the go-mysql bug: a format
// description (MySQL 5.7, checksums off), a table map of one INT column,
// and a WRITE_ROWS_EVENTv1 for it whose column count is 0, followed by one
// byte of row data.
func zeroColumnRepro() [][]byte {
	event := func(typ replication.EventType, body []byte) []byte {
		h := make([]byte, replication.EventHeaderSize)
		h[4] = byte(typ)
		binary.LittleEndian.PutUint32(h[5:], 1)
		binary.LittleEndian.PutUint32(h[9:], uint32(len(h)+len(body)))
		return append(h, body...)
	}
	fde := binary.LittleEndian.AppendUint16(nil, 4)
	fde = append(fde, make([]byte, 50)...)
	copy(fde[2:], "5.7.44")
	fde = append(fde, 0, 0, 0, 0, replication.EventHeaderSize)
	post := make([]byte, 40)
	post[replication.TABLE_MAP_EVENT-1] = 8
	post[replication.WRITE_ROWS_EVENTv1-1] = 8
	fde = append(fde, post...)
	fde = append(fde, byte(replication.BINLOG_CHECKSUM_ALG_OFF), 0, 0, 0, 0)

	tableMap := []byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 'd', 0, 1, 't', 0, 1, 3 /* MYSQL_TYPE_LONG */, 0 /* no metadata */, 0 /* null bitmap */}
	rows := []byte{1, 0, 0, 0, 0, 0, 1, 0 /* STMT_END */, 0 /* column count 0 */, 0 /* one byte of rows */}
	return [][]byte{
		event(replication.FORMAT_DESCRIPTION_EVENT, fde),
		event(replication.TABLE_MAP_EVENT, tableMap),
		event(replication.WRITE_ROWS_EVENTv1, rows),
	}
}

// TestGuardStopsAtDamage damages each kind of field of the seed binlogs,
// with checksums recomputed (or none at all), and checks that reading
// stops at the damaged event with an error naming it, after exactly the
// transactions that ended before it, allocating a bounded amount.
func TestGuardStopsAtDamage(t *testing.T) {
	for _, seed := range seedBinlogs {
		clean := readSeed(t, seed)
		name := filepath.Base(seed)
		good, err := decodeBytes(name, clean, Limits{})
		if err != nil || len(good) < 5 {
			t.Fatalf("%s: %d txns, %v", seed, len(good), err)
		}
		evs := eventsOf(t, clean)
		rows := firstEvent(t, evs, replication.WRITE_ROWS_EVENTv1)
		update := firstEvent(t, evs, replication.UPDATE_ROWS_EVENTv1)
		tmap := firstEvent(t, evs, replication.TABLE_MAP_EVENT)
		gtidList := firstEvent(t, evs, replication.MARIADB_GTID_LIST_EVENT)
		rowsCount := rows.off + replication.EventHeaderSize + 8 // table id 6, flags 2
		tmapCount := tmap.off + replication.EventHeaderSize + 8 + 1 + int(clean[tmap.off+replication.EventHeaderSize+8]) + 1
		tmapCount += 1 + int(clean[tmapCount]) + 1
		updCount := update.off + replication.EventHeaderSize + 8
		cols := int(clean[rowsCount])

		// before counts the transactions that end at or before off.
		before := func(off int) int {
			n := 0
			for _, tx := range good {
				if int(tx.End.Offset) <= off {
					n++
				}
			}
			return n
		}
		set := func(at int, v ...byte) func([]byte) []byte {
			return func(b []byte) []byte { copy(b[at:], v); return b }
		}
		cases := []struct {
			name   string
			mutate func([]byte) []byte
			offset int // of the event the error must name
			msg    string
		}{
			{"rows column count 0", set(rowsCount, 0), rows.off, "column count 0"},
			{"rows column count differs from table map", set(rowsCount, byte(cols+1)), rows.off, "table map"},
			{"rows bitmap all zero", func(b []byte) []byte {
				for i := range (cols + 7) / 8 {
					b[rowsCount+1+i] = 0
				}
				return b
			}, rows.off, "no column in its bitmaps"},
			{"update bitmaps all zero", func(b []byte) []byte {
				n := int(b[updCount])
				for i := range 2 * ((n + 7) / 8) {
					b[updCount+1+i] = 0
				}
				return b
			}, update.off, "no column in its bitmaps"},
			{"rows table id unknown", set(rows.off+replication.EventHeaderSize, 0xEE), rows.off, "no table map"},
			{"table map column count 0", set(tmapCount, 0), tmap.off, "column count 0"},
			{"table map column count huge", set(tmapCount, 0xfc, 0xff, 0xff), tmap.off, "column count 65535"},
			{"gtid list count huge", set(gtidList.off+replication.EventHeaderSize, 0xff, 0xff, 0xff, 0x0f), gtidList.off, "GTIDs"},
			{"event length huge", set(rows.off+9, 0xff, 0xff, 0xff, 0x7f), rows.off, "max-event-size"},
			{"event length past the end", set(rows.off+9, 0xff, 0xff, 0x0f, 0x00), rows.off, "truncated"},
			{"event length short", set(rows.off+9, 3, 0, 0, 0), rows.off, "shorter than the event header"},
			{"event length one more", func(b []byte) []byte {
				binary.LittleEndian.PutUint32(b[rows.off+9:], uint32(rows.size+1))
				return b
			}, rows.off, "end position"},
			{"event type unknown", set(rows.off+4, 0xEE), rows.off, "event type 238 is unknown"},
			{"event type zero", set(rows.off+4, 0), rows.off, "unknown"},
			{"format description header length", set(4+replication.EventHeaderSize+56, 20), 4, "header length"},
			{"format description checksum algorithm", func(b []byte) []byte {
				n := int(binary.LittleEndian.Uint32(b[4+9:]))
				b[4+n-5] = 7
				return b
			}, 4, "checksum algorithm"},
			{"format description missing", func(b []byte) []byte {
				n := int(binary.LittleEndian.Uint32(b[4+9:]))
				return append(b[:4], b[4+n:]...)
			}, 4, "not a binlog"},
			{"not a binlog", func([]byte) []byte { return []byte("SELECT 1; -- not a binlog\n") }, 0, "not a binlog"},
			{"truncated mid-header", func(b []byte) []byte { return b[:rows.off+7] }, rows.off, "truncated"},
			{"truncated mid-event", func(b []byte) []byte { return b[:rows.off+rows.size/2] }, rows.off, "truncated"},
		}
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				b := fixCRC(c.mutate(bytes.Clone(clean)))
				var got []*txn.Txn
				var err error
				alloc := allocated(func() { got, err = decodeBytes(name, b, Limits{}) })
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("after %d txns: %v, want a *FormatError", len(got), err)
				}
				if int(fe.Offset) != c.offset || fe.File != name || !strings.Contains(err.Error(), c.msg) {
					t.Errorf("error %q (offset %d), want offset %d and %q", err, fe.Offset, c.offset, c.msg)
				}
				if want := before(c.offset); len(got) != want {
					t.Errorf("%d txns before the damage, want %d", len(got), want)
				}
				for i := range got {
					if got[i].GTID != good[i].GTID || got[i].End != good[i].End {
						t.Errorf("txn %d: %s %v, want %s %v", i, got[i].GTID, got[i].End, good[i].GTID, good[i].End)
					}
				}
				if limit := decodeAllocCap(len(b)); alloc > limit {
					t.Errorf("decoding %d bytes allocated %d, more than %d", len(b), alloc, limit)
				}
			})
		}
	}
}

// TestGuardLimits: the per-event and per-transaction caps stop a read
// with an error that names the flag.
func TestGuardLimits(t *testing.T) {
	clean := readSeed(t, seedBinlogs[0])
	for _, c := range []struct {
		lim Limits
		msg string
	}{
		{Limits{MaxEvent: 200}, "--max-event-size 200"},
		{Limits{MaxTxn: 300}, "--max-txn-size 300"},
	} {
		_, err := decodeBytes("crc32.000001", clean, c.lim)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("limits %+v: %v, want %q", c.lim, err, c.msg)
		}
	}
	good, err := decodeBytes("crc32.000001", clean, Limits{})
	if err != nil {
		t.Fatal(err)
	}

	// A transaction past --max-txn-size is refused at its end, before
	// anything of it is returned, named with its size, its place and the
	// ways to go on. (A DDL is one event: --max-event-size bounds it.)
	// The cap counts a transaction's events before its commit (an XID
	// event of 31 bytes with its checksum).
	over := func(x *txn.Txn) bool { return x.Size-31 > 300 && x.Flags&txn.FlagStandalone == 0 }
	var big *txn.Txn
	for _, x := range good {
		if over(x) {
			big = x
			break
		}
	}
	if big == nil {
		t.Fatal("no transaction of more than 300 bytes in the seed")
	}
	got, err := decodeBytes("crc32.000001", clean, Limits{MaxTxn: 300})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != big.Start.Offset || fe.GTID != big.GTID {
		t.Fatalf("refusal: %v, want a *FormatError at %s (%s)", err, big.Start, big.GTID)
	}
	for _, want := range []string{fmt.Sprintf("transaction of %d bytes", big.Size), fmt.Sprintf("to offset %d", big.End.Offset),
		fmt.Sprintf("--start-position=%d --stop-position=%d crc32.000001", big.Start.Offset, big.End.Offset), "--skip-gtid " + big.GTID} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if n := len(got); n == 0 || got[n-1].End.Offset > big.Start.Offset {
		t.Errorf("%d transactions returned before the refusal, the last ending after %s", n, big.Start)
	}

	// Named by a skip, a transaction is dropped as it is read, whatever
	// its size, and the read goes on.
	overByGTID := map[string]bool{}
	for _, x := range good {
		overByGTID[x.GTID] = over(x)
	}
	d := NewDecoder(Limits{MaxTxn: 300}, func(g string, _ txn.Position) bool { return overByGTID[g] })
	var all []*txn.Txn
	err = d.DecodeFile(context.Background(), "crc32.000001", bytes.NewReader(clean), int64(len(clean)), 4,
		func(t *txn.Txn) bool { all = append(all, t); return true })
	if err = d.EndFile(err, "next"); err != nil || len(all) != len(good) {
		t.Fatalf("skipping: %d transactions, %v; want %d", len(all), err, len(good))
	}
	for i, x := range all {
		if dropped := over(good[i]); dropped != (len(x.Changes) == 0 && len(good[i].Changes) > 0) || x.End != good[i].End {
			t.Errorf("txn %d (%d bytes): %d changes (of %d), end %s", i, good[i].Size, len(x.Changes), len(good[i].Changes), x.End)
		}
	}
}
