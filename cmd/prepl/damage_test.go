package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/sandbox"
)

// damageRSSCap is the peak resident memory prepl may reach replaying any
// damaged binlog of the corpus below, run with GOMEMLIMIT=256MiB.
const damageRSSCap = 300 << 20

type binlogEvent struct {
	off, size int
	typ       replication.EventType
}

func eventsIn(t *testing.T, b []byte) []binlogEvent {
	t.Helper()
	var evs []binlogEvent
	for off := 4; off+replication.EventHeaderSize <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off+9:]))
		if n < replication.EventHeaderSize || off+n > len(b) {
			t.Fatalf("bad event at %d", off)
		}
		evs = append(evs, binlogEvent{off, n, replication.EventType(b[off+4])})
		off += n
	}
	return evs
}

// recomputeCRC gives every event of a CRC32 binlog a correct checksum, as
// damage written by the server itself would have.
func recomputeCRC(b []byte, crc bool) []byte {
	if !crc {
		return b
	}
	for off := 4; off+replication.EventHeaderSize <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off+9:]))
		if n < replication.EventHeaderSize+4 || off+n > len(b) {
			break
		}
		binary.LittleEndian.PutUint32(b[off+n-4:], crc32.ChecksumIEEE(b[off:off+n-4]))
		off += n
	}
	return b
}

// logTxn is a transaction of counterWorkload that inserts into w.log.
type logTxn struct {
	gtid       string
	start, end int
}

func logTxns(t *testing.T, path string) []logTxn {
	t.Helper()
	r, err := fileset.Open([]string{path}, fileset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []logTxn
	for {
		tx, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range tx.Changes {
			if c.Row != nil && c.Row.Table.Name == "log" {
				out = append(out, logTxn{tx.GTID, int(tx.Start.Offset), int(tx.End.Offset)})
				break
			}
		}
	}
}

// TestBadInputStopsAtLastCompleteTransaction replays damaged copies of a
// real binlog (CRC32 and binlog_checksum=NONE): truncations, every kind
// of field changed (with checksums recomputed where the binlog has them,
// so the damage reaches the decoders), a file that is not a binlog. Each
// run must exit with the code that says whether a restart can help, name
// the file and the damaged event's offset (and its transaction's GTID),
// leave the target holding exactly the transactions that ended before the
// damage, and stay under damageRSSCap.
func TestBadInputStopsAtLastCompleteTransaction(t *testing.T) {
	bin := preplBinary(t)
	for _, checksum := range []string{"CRC32", "NONE"} {
		t.Run(checksum, func(t *testing.T) {
			src := source(t, func(o *sandbox.Options) { o.Flags = append(o.Flags, "--binlog-checksum="+checksum) })
			counterWorkload(t, sandbox.MustOpen(t, src, ""), 200, 1)
			files := binlogFiles(t, src)
			if len(files) < 2 {
				t.Fatalf("want two binlog files after FLUSH BINARY LOGS: %v", files)
			}
			clean, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			crc := checksum == "CRC32"
			txns := logTxns(t, files[0])
			evs := eventsIn(t, clean)
			mid := txns[len(txns)/2]
			var tmap, rows, update binlogEvent
			for _, e := range evs {
				if e.off < mid.start || e.off >= mid.end {
					continue
				}
				switch {
				case e.typ == replication.TABLE_MAP_EVENT && tmap.off == 0:
					tmap = e
				case e.typ == replication.WRITE_ROWS_EVENTv1 && rows.off == 0:
					rows = e
				case e.typ == replication.UPDATE_ROWS_EVENTv1 && update.off == 0:
					update = e
				}
			}
			if tmap.off == 0 || rows.off == 0 || update.off == 0 {
				t.Fatalf("transaction %s lacks a table map, write or update rows event", mid.gtid)
			}
			const hdr = replication.EventHeaderSize
			rowsCount := rows.off + hdr + 8 // after table id (6) and flags (2)
			tmapCount := tmap.off + hdr + 8
			tmapCount += 1 + int(clean[tmapCount]) + 1 // schema
			tmapCount += 1 + int(clean[tmapCount]) + 1 // table
			// w.log (id INT, session INT, note VARCHAR(40)): the note's length
			// byte follows the column bitmap, the null bitmap and two INTs.
			noteLen := rowsCount + 1 + 1 + 1 + 4 + 4

			set := func(at int, v ...byte) func([]byte) []byte {
				return func(b []byte) []byte { copy(b[at:], v); return recomputeCRC(b, crc) }
			}
			cases := []struct {
				name    string
				damage  func([]byte) []byte
				at      int    // where the damage is: transactions ending after it are lost
				offset  int    // named in the error
				gtid    bool   // the error names the transaction's GTID
				code    int    // exit code
				msg     string // in the error
				onlyCRC bool
				next    bool // replay the next binlog file after the damaged one
			}{
				// The last file ending inside a transaction or an event is
				// what a binlog still being written looks like: exit 1, a
				// later run may find the rest.
				{"truncated mid-header, last file", func(b []byte) []byte { return b[:rows.off+7] }, rows.off, mid.start, true, 1, "incomplete", false, false},
				{"truncated mid-event, last file", func(b []byte) []byte { return b[:rows.off+rows.size/2] }, rows.off, mid.start, true, 1, "incomplete", false, false},
				{"truncated mid-transaction, last file", func(b []byte) []byte { return b[:rows.off] }, rows.off, mid.start, true, 1, "incomplete", false, false},
				// Followed by another file, the same cuts are damage.
				{"truncated mid-header", func(b []byte) []byte { return b[:rows.off+7] }, rows.off, rows.off, true, 2, "truncated event", false, true},
				{"truncated mid-event", func(b []byte) []byte { return b[:rows.off+rows.size/2] }, rows.off, rows.off, true, 2, "truncated event", false, true},
				// Cut between two events, the file is a gap in the stream: the
				// file set is refused before anything is applied (offset -1:
				// no offset is named, the two files are).
				{"truncated mid-transaction", func(b []byte) []byte { return b[:rows.off] }, 0, -1, false, 2, "is it cut short?", false, true},
				{"event length huge", set(rows.off+9, 0xff, 0xff, 0xff, 0x7f), rows.off, rows.off, true, 2, "max-event-size", false, false},
				// A length past the end of the last file reads as an event still
				// being written.
				{"event length past the end", set(rows.off+9, 0, 0, 0, 0x10), rows.off, mid.start, true, 1, "runs past the end of the file", false, false},
				{"event length short", set(rows.off+9, 5, 0, 0, 0), rows.off, rows.off, true, 2, "shorter than the event header", false, false},
				{"event length one more", set(rows.off+9, byte(rows.size+1), byte((rows.size+1)>>8)), rows.off, rows.off, true, 2, "end position", false, false},
				{"event type", set(rows.off+4, 0xEE), rows.off, rows.off, true, 2, "unknown", false, false},
				{"table id", set(rows.off+hdr, 0xEE), rows.off, rows.off, true, 2, "no table map", false, false},
				{"column count 0", set(rowsCount, 0), rows.off, rows.off, true, 2, "column count 0", false, false},
				{"column count differs from the table map", set(rowsCount, 7), rows.off, rows.off, true, 2, "its table map", false, false},
				{"column bitmap empty", set(rowsCount+1, 0), rows.off, rows.off, true, 2, "no column in its bitmaps", false, false},
				{"update bitmaps empty", set(update.off+hdr+9, 0, 0), update.off, update.off, true, 2, "no column in its bitmaps", false, false},
				{"table map column count huge", set(tmapCount, 0xfc, 0xff, 0xff), tmap.off, tmap.off, true, 2, "column count 65535", false, false},
				{"string length", set(noteLen, 0xff), rows.off, rows.off, true, 2, "corrupted", false, false},
				// Without checksums a changed value byte cannot be told
				// from a real value; with them it is a checksum mismatch.
				{"value byte", func(b []byte) []byte { b[noteLen-8] ^= 0x40; return b }, rows.off, rows.off, true, 2, "checksum mismatch", true, false},
				{"format description missing", func(b []byte) []byte {
					n := int(binary.LittleEndian.Uint32(b[4+9:]))
					return append(b[:4:4], b[4+n:]...)
				}, 0, 4, false, 2, "not a binlog", false, false},
				{"not a binlog", func([]byte) []byte { return []byte("-- a SQL dump, not a binlog\nSELECT 1;\n") }, 0, 0, false, 2, "not a binlog", false, false},
			}
			tgt := targetServer(t)
			tdb := sandbox.MustOpen(t, tgt, "")
			dir := t.TempDir()
			for _, c := range cases {
				if c.onlyCRC && !crc {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					sandbox.MustExec(t, tdb, "DROP DATABASE IF EXISTS w", "DROP DATABASE IF EXISTS prepl")
					path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"), filepath.Base(files[0]))
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, c.damage(bytes.Clone(clean)), 0o644); err != nil {
						t.Fatal(err)
					}
					args := []string{"replay", "--target", tgt.URL(), "--workers", "4", "--progress", "0", path}
					if c.next {
						args = append(args, files[1])
					}
					cmd := exec.Command(bin, args...)
					cmd.Env = append(os.Environ(), "GOMEMLIMIT=256MiB")
					out, _ := cmd.CombinedOutput()
					code := cmd.ProcessState.ExitCode()
					rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
					where := fmt.Sprintf("%s at offset %d", filepath.Base(path), c.offset)
					if c.offset < 0 {
						where = filepath.Base(files[1]) + " starts after"
					}
					if code != c.code || !strings.Contains(string(out), where) || !strings.Contains(string(out), c.msg) {
						t.Errorf("exit %d, want %d with %q and %q:\n%s", code, c.code, where, c.msg, out)
					}
					if c.gtid && !strings.Contains(string(out), mid.gtid) {
						t.Errorf("the error does not name the transaction's GTID %s:\n%s", mid.gtid, out)
					}
					want := 0
					for _, tx := range txns {
						if tx.end <= c.at {
							want++
						}
					}
					n, maxID, sum := 0, -1, 0
					if want == 0 {
						var tables int
						tdb.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'w'").Scan(&tables)
						if tables != 0 {
							t.Errorf("nothing precedes the damage, yet the target has %d tables in w", tables)
						}
					} else {
						if err := tdb.QueryRow("SELECT COUNT(*), COALESCE(MAX(id), -1) FROM w.log").Scan(&n, &maxID); err != nil {
							t.Fatal(err)
						}
						if err := tdb.QueryRow("SELECT SUM(n) FROM w.hot").Scan(&sum); err != nil {
							t.Fatal(err)
						}
					}
					if n != want || maxID != want-1 || sum != want {
						t.Errorf("target holds %d log rows (max id %d, counter sum %d), want the %d transactions before the damage", n, maxID, sum, want)
					}
					t.Logf("exit %d, peak RSS %d MiB", code, rss>>20)
					if rss > damageRSSCap {
						t.Errorf("peak RSS %d MiB, more than the cap %d MiB", rss>>20, damageRSSCap>>20)
					}
				})
			}
		})
	}
}

// TestDamagedEventInLiveStream: a rows event with a CRC-correct column
// count of 0 in the source's own binlog. replicate reads it, reads it again
// from the last complete transaction (a fault on the wire would be gone),
// meets it at the same place and exits 2 naming file, offset and GTID,
// with the target holding the transactions before it.
func TestDamagedEventInLiveStream(t *testing.T) {
	src := source(t, nil)
	counterWorkload(t, sandbox.MustOpen(t, src, ""), 100, 1)
	files := binlogFiles(t, src)
	txns := logTxns(t, files[0])
	mid := txns[len(txns)/2]
	src.Stop()
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rows binlogEvent
	for _, e := range eventsIn(t, b) {
		if e.off >= mid.start && e.typ == replication.WRITE_ROWS_EVENTv1 {
			rows = e
			break
		}
	}
	b[rows.off+replication.EventHeaderSize+8] = 0 // column count
	if err := os.WriteFile(files[0], recomputeCRC(b, true), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := src.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	tgt := targetServer(t)
	code, out := prepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--stop-at-end", "--progress", "0")
	where := fmt.Sprintf("%s at offset %d (in transaction %s)", filepath.Base(files[0]), rows.off, mid.gtid)
	if code != 2 || !strings.Contains(out, where) || !strings.Contains(out, "column count 0") || !strings.Contains(out, "read twice") {
		t.Fatalf("exit %d, want 2 naming %q, the column count and the second read:\n%s", code, where, out)
	}
	want := 0
	for _, tx := range txns {
		if tx.end <= rows.off {
			want++
		}
	}
	var n int
	if err := sandbox.MustOpen(t, tgt, "").QueryRow("SELECT COUNT(*) FROM w.log").Scan(&n); err != nil || n != want {
		t.Fatalf("target holds %d log rows (%v), want the %d transactions before the damage", n, err, want)
	}
}
