package mysql_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
	"github.com/prepl/prepl/verify"
)

// countingProxy forwards TCP connections to a server and counts the
// queries clients send: MySQL packets with sequence number 0 (the
// handshake's packets have others) of command COM_QUERY, one per round
// trip of SQL text. (database/sql closes prepared statements of the
// catalog's reads when it likes, with COM_STMT_CLOSE.)
type countingProxy struct {
	ln       net.Listener
	commands atomic.Int64
	wg       sync.WaitGroup
}

func startProxy(t *testing.T, to string) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			p.wg.Add(2)
			go func() { defer p.wg.Done(); io.Copy(c, s); c.Close() }()
			go func() { defer p.wg.Done(); p.count(c, s); s.Close() }()
		}
	}()
	return p
}

const comQuery = 0x03

// count copies client packets to the server, counting commands.
func (p *countingProxy) count(c, s net.Conn) { // c: the client, s: the server
	var head [4]byte
	for {
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return
		}
		n := int64(binary.LittleEndian.Uint32(append(head[:3:3], 0)))
		if _, err := s.Write(head[:]); err != nil {
			return
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		if head[3] == 0 && n > 0 && buf[0] == comQuery {
			p.commands.Add(1)
		}
		if _, err := s.Write(buf); err != nil {
			return
		}
	}
}

func (p *countingProxy) url() string {
	return "mysql://root@" + p.ln.Addr().String() + "?ssl-mode=DISABLED"
}

// status reads global status counters of db.
func status(t *testing.T, db *sql.DB, names ...string) map[string]int64 {
	t.Helper()
	rows, err := db.Query("SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('" +
		strings.ToUpper(strings.Join(names, "','")) + "')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[strings.ToLower(k)] = v
	}
	return out
}

// keepGTIDPair starts a source with a binlog and a target with one (a
// failover candidate), the target opened through a counting proxy with
// --keep-gtid; schema runs on both, kept out of the target's binlog.
func keepGTIDPair(t *testing.T, schema ...string) (src, dst *sandbox.Server, sdb, ddb *sql.DB, tgt *mysql.Target, proxy *countingProxy) {
	t.Helper()
	o := sandbox.Defaults()
	o.Binlog = true
	src = sandbox.MustStart(t, o)
	sdb = sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, schema...)
	o.ServerID = 2
	dst = sandbox.MustStart(t, o)
	ddb = sandbox.MustOpen(t, dst, "")
	ddb.SetMaxOpenConns(1) // sql_log_bin stays off on its one session
	sandbox.MustExec(t, ddb, "SET SESSION sql_log_bin=0")
	sandbox.MustExec(t, ddb, schema...)
	proxy = startProxy(t, dst.Addr())
	e, err := mysql.ParseURL(proxy.url())
	if err != nil {
		t.Fatal(err)
	}
	tgt, err = mysql.Open(context.Background(), e, "keep", mysql.KeepGTIDs())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return src, dst, sdb, ddb, tgt, proxy
}

// checkpoints are the positions after each of txs, in slot main, the
// first counting applied transactions from base.
func checkpoints(txs []*txn.Txn, base uint64) []position.Checkpoint {
	ps := make([]position.Checkpoint, len(txs))
	for i, tx := range txs {
		ps[i] = position.Checkpoint{Slot: "main", GTIDPos: tx.GTID, File: tx.End.File, Pos: tx.End.Offset, LastGTID: tx.GTID,
			SourceTS: tx.Timestamp, Applied: base + uint64(i) + 1,
			Floor: position.Floor{GTIDPos: tx.GTID, File: tx.End.File, Pos: tx.End.Offset}}
	}
	return ps
}

func renderEach(t *testing.T, tgt *mysql.Target, txs []*txn.Txn) apply.Batch {
	t.Helper()
	ctx := context.Background()
	for _, tx := range txs {
		if err := tgt.Catalog.LoadTxn(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	b, err := tgt.Render(ctx, txs, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.(*mysql.EachBatch); !ok {
		t.Fatalf("a keep-gtid MariaDB target rendered %T, want *mysql.EachBatch", b)
	}
	return b
}

func applyEach(t *testing.T, tgt *mysql.Target, b apply.Batch, from int, ps []position.Checkpoint) (int, error) {
	t.Helper()
	c, err := tgt.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.(apply.EachConn).ApplyEach(context.Background(), b, from, ps)
}

func gtidBinlogPos(t *testing.T, db *sql.DB) string {
	t.Helper()
	var pos string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatal(err)
	}
	return pos
}

// TestApplyEachRoundTripsAndStatements applies 200 source transactions
// with --keep-gtid in one unit: one round trip for all of them (they fit
// in one), five statements each for a single-row UPDATE (the GTID's SET,
// BEGIN, the row, the position, COMMIT: the row's count checked by the
// position write), one target commit and one GTID each; then a unit of
// every kind of change, several statements a transaction; the target
// equals the source, its binlog holds the source's GTIDs.
func TestApplyEachRoundTripsAndStatements(t *testing.T) {
	ctx := context.Background()
	src, _, sdb, ddb, tgt, proxy := keepGTIDPair(t, "CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY, v INT, s VARCHAR(20))", "CREATE TABLE d.nokey (a INT, b VARCHAR(10))")
	const n = 200
	var vals []string
	for i := 0; i < n; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 0, 'x')", i))
	}
	sandbox.MustExec(t, sdb, "INSERT INTO d.t VALUES "+strings.Join(vals, ","))
	for i := 0; i < n; i++ {
		sandbox.MustExec(t, sdb, fmt.Sprintf("UPDATE d.t SET v = %d WHERE id = %d", i+1, (i*7)%n))
	}
	mixed := [][]string{
		{"BEGIN", "UPDATE d.t SET s = 'a' WHERE id = 1", "DELETE FROM d.t WHERE id = 2", "INSERT INTO d.t VALUES (1000, 1, 'n')", "COMMIT"},
		{"BEGIN", "DELETE FROM d.t WHERE id = 3", "UPDATE d.t SET v = v + 100 WHERE id IN (4, 5, 6)", "COMMIT"},
		{"INSERT INTO d.nokey VALUES (1, 'x'), (1, 'x'), (2, 'y')"},
		{"UPDATE d.nokey SET b = 'z' WHERE a = 2"},
		{"DELETE FROM d.nokey WHERE a = 1 LIMIT 1"},
		{"BEGIN", "INSERT INTO d.t VALUES (1001, 1, 'n')", "UPDATE d.t SET v = 7 WHERE id = 1001", "DELETE FROM d.t WHERE id = 1001", "COMMIT"},
	}
	for _, g := range mixed {
		sandbox.MustExec(t, sdb, g...)
	}
	txs := readTxns(t, src)
	if len(txs) != 1+n+len(mixed) {
		t.Fatalf("%d row transactions in the source's binlog, want %d", len(txs), 1+n+len(mixed))
	}
	first, updates, rest := txs[:1], txs[1:1+n], txs[1+n:]
	ps := checkpoints(txs, 0)

	// The slot's first write inserts its row; later ones update it.
	if got, err := applyEach(t, tgt, renderEach(t, tgt, first), 0, ps[:1]); got != 1 || err != nil {
		t.Fatalf("first unit: %d committed, %v", got, err)
	}

	b := renderEach(t, tgt, updates)
	c, err := tgt.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	counters := []string{"questions", "com_commit", "com_update", "com_begin", "com_set_option"}
	before, trips := status(t, ddb, counters...), proxy.commands.Load()
	got, err := c.(apply.EachConn).ApplyEach(ctx, b, 0, ps[1:1+n])
	trips = proxy.commands.Load() - trips
	after := status(t, ddb, counters...)
	if got != n || err != nil {
		t.Fatalf("%d of %d committed: %v", got, n, err)
	}
	delta := func(k string) int64 { return after[k] - before[k] }
	// The status query itself is one question.
	t.Logf("%d transactions: %d round trips, %d statements, %d commits, %d UPDATEs, %d BEGINs, %d SETs",
		n, trips, delta("questions")-1, delta("com_commit"), delta("com_update"), delta("com_begin"), delta("com_set_option"))
	if trips != 1 {
		t.Errorf("%d round trips for %d transactions of a few hundred bytes each, want 1", trips, n)
	}
	if q := delta("questions") - 1; q != 5*n {
		t.Errorf("%d statements for %d single-row UPDATE transactions, want %d (5 each)", q, n, 5*n)
	}
	if delta("com_commit") != n || delta("com_begin") != n {
		t.Errorf("%d COMMITs and %d BEGINs for %d transactions", delta("com_commit"), delta("com_begin"), n)
	}
	if delta("com_update") != 2*n {
		t.Errorf("%d UPDATEs, want %d: the row and the position's", delta("com_update"), 2*n)
	}

	b = renderEach(t, tgt, rest)
	trips = proxy.commands.Load()
	if got, err := c.(apply.EachConn).ApplyEach(ctx, b, 0, ps[1+n:]); got != len(rest) || err != nil {
		t.Fatalf("mixed unit: %d of %d committed: %v", got, len(rest), err)
	}
	if trips = proxy.commands.Load() - trips; trips != 1 {
		t.Errorf("%d round trips for the mixed unit, want 1", trips)
	}
	if err := verify.Rows(ctx, sdb, ddb); err != nil {
		t.Fatalf("target differs from the source: %v", err)
	}
	if s, d := gtidBinlogPos(t, sdb), gtidBinlogPos(t, ddb); s != d {
		t.Errorf("target gtid_binlog_pos %q, source %q", d, s)
	}
	var binlogCommits int64
	ddb.QueryRow("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'BINLOG_COMMITS'").Scan(&binlogCommits)
	if want := int64(len(txs)); binlogCommits != want {
		t.Errorf("the target's binlog took %d commits, want %d: one per source transaction, none of prepl's", binlogCommits, want)
	}
	stored, err := tgt.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p, want := stored["main"], ps[len(ps)-1]; p.Applied != want.Applied || p.Pos != want.Pos || p.GTIDPos != want.GTIDPos {
		t.Errorf("stored position %+v, want %+v", p, want)
	}
}

// TestApplyEachFailsAtTheRightTransaction: in a unit of eight source
// transactions sent in one round trip, the fourth meets a duplicate key on
// the target. ApplyEach reports three committed and names the fourth;
// the target holds the first three (rows, GTIDs, position) and nothing
// of the rest. Repaired, the unit goes on from the fourth. Then a row
// check of the server fails: an UPDATE whose row the target lacks, first
// as a transaction's last statement (checked by the position write), then
// before another statement of its transaction (checked by @prepl_bad).
func TestApplyEachFailsAtTheRightTransaction(t *testing.T) {
	ctx := context.Background()
	src, dst, sdb, ddb, tgt, _ := keepGTIDPair(t, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
	for i := 0; i < 8; i++ {
		sandbox.MustExec(t, sdb, fmt.Sprintf("INSERT INTO d.t VALUES (%d, %d)", i, i))
	}
	sandbox.MustExec(t, sdb, "UPDATE d.t SET v = 100 WHERE id = 1")                                                           // 8
	sandbox.MustExec(t, sdb, "UPDATE d.t SET v = 101 WHERE id = 2")                                                           // 9
	sandbox.MustExec(t, sdb, "BEGIN", "UPDATE d.t SET v = 102 WHERE id = 3", "UPDATE d.t SET v = 103 WHERE id = 4", "COMMIT") // 10
	sandbox.MustExec(t, sdb, "UPDATE d.t SET v = 104 WHERE id = 5")                                                           // 11
	txs := readTxns(t, src)
	if len(txs) != 12 {
		t.Fatalf("%d row transactions, want 12", len(txs))
	}
	ps := checkpoints(txs, 0)

	// Row 3 is on the target already: the fourth transaction's INSERT fails.
	sandbox.MustExec(t, ddb, "INSERT INTO d.t VALUES (3, 3)")
	b := renderEach(t, tgt, txs[:8])
	got, err := applyEach(t, tgt, b, 0, ps[:8])
	if got != 3 || mysql.ErrorCode(err) != 1062 || !strings.Contains(err.Error(), txs[3].GTID) {
		t.Fatalf("ApplyEach = %d, %v; want 3 committed and a duplicate key naming %s", got, err, txs[3].GTID)
	}
	for _, id := range []int{4, 5, 6, 7} {
		var n int
		ddb.QueryRow("SELECT COUNT(*) FROM d.t WHERE id = ?", id).Scan(&n)
		if n != 0 {
			t.Errorf("row %d, of a transaction after the failing one, is on the target", id)
		}
	}
	if pos := gtidBinlogPos(t, ddb); pos != txs[2].GTID {
		t.Errorf("target gtid_binlog_pos %q, want the third transaction's %s", pos, txs[2].GTID)
	}
	stored, err := tgt.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := stored["main"]; p.Applied != 3 || p.Pos != ps[2].Pos {
		t.Errorf("stored position %d applied at %d, want 3 at %d", p.Applied, p.Pos, ps[2].Pos)
	}
	// Repaired, the unit goes on where it stopped; -1: read where.
	sandbox.MustExec(t, ddb, "DELETE FROM d.t WHERE id = 3")
	if got, err := applyEach(t, tgt, b, -1, ps[:8]); got != 8 || err != nil {
		t.Fatalf("after the repair: %d committed, %v; want 8", got, err)
	}

	// The UPDATE of the tenth transaction's last statement finds no row 4.
	sandbox.MustExec(t, ddb, "DELETE FROM d.t WHERE id = 4")
	b = renderEach(t, tgt, txs[8:])
	got, err = applyEach(t, tgt, b, 0, ps[8:])
	if got != 2 || !errors.Is(err, mysql.ErrRowCount) || !strings.Contains(err.Error(), txs[10].GTID) || !strings.Contains(err.Error(), "id=4") {
		t.Fatalf("ApplyEach = %d, %v; want 2 committed and a row count error naming %s and id=4", got, err, txs[10].GTID)
	}
	var v int
	ddb.QueryRow("SELECT v FROM d.t WHERE id = 3").Scan(&v)
	if v != 3 {
		t.Errorf("row 3 has v=%d: the failing transaction's first UPDATE committed", v)
	}
	if pos := gtidBinlogPos(t, ddb); pos != txs[9].GTID {
		t.Errorf("target gtid_binlog_pos %q, want %s", pos, txs[9].GTID)
	}
	// The same on a channel whose position row does not exist yet: its
	// first write inserts it, and checks the count all the same.
	e, err := mysql.ParseURL(dst.URL())
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := mysql.Open(ctx, e, "fresh", mysql.KeepGTIDs())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	got, err = applyEach(t, fresh, renderEach(t, fresh, txs[10:11]), 0, ps[10:11])
	if got != 0 || !errors.Is(err, mysql.ErrRowCount) || !strings.Contains(err.Error(), "id=4") {
		t.Fatalf("first write of a channel: ApplyEach = %d, %v; want 0 committed and a row count error naming id=4", got, err)
	}
	if pos := gtidBinlogPos(t, ddb); pos != txs[9].GTID {
		t.Errorf("target gtid_binlog_pos %q, want %s", pos, txs[9].GTID)
	}
	if stored, err := fresh.Positions(ctx); err != nil || len(stored) != 0 {
		t.Errorf("channel fresh has positions %v (%v), want none", stored, err)
	}
	// Now its first UPDATE finds no row 3 (row 4 back): checked by @prepl_bad.
	sandbox.MustExec(t, ddb, "DELETE FROM d.t WHERE id = 3", "INSERT INTO d.t VALUES (4, 4)")
	got, err = applyEach(t, tgt, b, 2, ps[8:])
	if got != 2 || !errors.Is(err, mysql.ErrRowCount) || !strings.Contains(err.Error(), txs[10].GTID) || !strings.Contains(err.Error(), "id=3") {
		t.Fatalf("ApplyEach = %d, %v; want 2 committed and a row count error naming %s and id=3", got, err, txs[10].GTID)
	}
	ddb.QueryRow("SELECT v FROM d.t WHERE id = 4").Scan(&v)
	if v != 4 {
		t.Errorf("row 4 has v=%d: the failing transaction committed", v)
	}
	sandbox.MustExec(t, ddb, "INSERT INTO d.t VALUES (3, 3)")
	if got, err := applyEach(t, tgt, b, -1, ps[8:]); got != 4 || err != nil {
		t.Fatalf("after the repair: %d committed, %v; want 4", got, err)
	}
	if err := verify.Rows(ctx, sdb, ddb); err != nil {
		t.Fatalf("target differs from the source: %v", err)
	}
	if s, d := gtidBinlogPos(t, sdb), gtidBinlogPos(t, ddb); s != d {
		t.Errorf("target gtid_binlog_pos %q, source %q", d, s)
	}
}

// runKeepGTID applies the source's binlog to tgt from its stored
// position, as prepl replay --keep-gtid does.
func runKeepGTID(t *testing.T, src *sandbox.Server, tgt *mysql.Target, cfg apply.Config) (apply.Stats, error) {
	t.Helper()
	ctx := context.Background()
	res, err := apply.LoadResume(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	files, err := src.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	var fo fileset.Options
	if res.Found {
		fo.StartFile, fo.StartOffset = res.Position.File, res.Position.Pos
	}
	rd, err := fileset.Open(files, fo)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	return apply.Run(ctx, rd, tgt, res, cfg)
}

// TestKeepGTIDRunStopsAtTheFailingTransaction runs the engine with
// --keep-gtid over 300 source transactions, in units of up to 1,000, on
// one worker and on four: the 151st meets a duplicate key on the target.
// The run stops naming it, counts the 150 before it as applied and no
// more, and the target holds exactly those (rows, GTIDs, position).
// Repaired, a second run goes on from there: the target equals the
// source, its binlog holds each source transaction once.
func TestKeepGTIDRunStopsAtTheFailingTransaction(t *testing.T) {
	for _, workers := range []int{0, 4} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			ctx := context.Background()
			schema := []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)"}
			src, _, sdb, ddb, tgt, _ := keepGTIDPair(t, append([]string{"SET SESSION sql_log_bin=0"}, schema...)...)
			sandbox.MustExec(t, sdb, "SET SESSION sql_log_bin=1")
			for i := 0; i < 300; i++ {
				if i%2 == 0 {
					sandbox.MustExec(t, sdb, fmt.Sprintf("INSERT INTO d.t VALUES (%d, %d)", i, i))
				} else {
					sandbox.MustExec(t, sdb, fmt.Sprintf("UPDATE d.t SET v = v + 1 WHERE id = %d", i-1))
				}
			}
			txs := readTxns(t, src)
			if len(txs) != 300 {
				t.Fatalf("%d transactions in the source's binlog, want 300", len(txs))
			}
			sandbox.MustExec(t, ddb, "INSERT INTO d.t VALUES (150, -1)") // the 151st inserts it
			cfg := apply.Config{Workers: workers, UnitTxns: 1000}
			st, err := runKeepGTID(t, src, tgt, cfg)
			if mysql.ErrorCode(err) != 1062 || !strings.Contains(err.Error(), txs[150].GTID) {
				t.Fatalf("run ended with %v, want a duplicate key naming %s", err, txs[150].GTID)
			}
			if st.Txns != 150 {
				t.Errorf("the run counts %d transactions applied, want 150", st.Txns)
			}
			if pos := gtidBinlogPos(t, ddb); pos != txs[149].GTID {
				t.Errorf("target gtid_binlog_pos %q, want %s", pos, txs[149].GTID)
			}
			stored, err := tgt.Positions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if p := stored[apply.SlotMain]; p.LastGTID != txs[149].GTID || p.Pos != txs[149].End.Offset {
				t.Errorf("stored position %s at %d, want %s at %d", p.LastGTID, p.Pos, txs[149].GTID, txs[149].End.Offset)
			}
			var n int
			ddb.QueryRow("SELECT COUNT(*) FROM d.t WHERE id > 150").Scan(&n)
			if n != 0 {
				t.Errorf("%d rows of transactions after the failing one are on the target", n)
			}

			sandbox.MustExec(t, ddb, "DELETE FROM d.t WHERE id = 150")
			st, err = runKeepGTID(t, src, tgt, cfg)
			if err != nil || st.Txns != 150 {
				t.Fatalf("second run: %d applied, %v; want 150", st.Txns, err)
			}
			if err := verify.Rows(ctx, sdb, ddb); err != nil {
				t.Fatalf("target differs from the source: %v", err)
			}
			if s, d := gtidBinlogPos(t, sdb), gtidBinlogPos(t, ddb); s != d {
				t.Errorf("target gtid_binlog_pos %q, source %q", d, s)
			}
			if c := status(t, ddb, "binlog_commits")["binlog_commits"]; c != 300 {
				t.Errorf("the target's binlog took %d commits, want 300: each source transaction once", c)
			}
		})
	}
}

// TestKeepGTIDRetryGoesOnFromTheFirstUncommitted: in a unit of 300 source
// transactions applied with --keep-gtid, the 151st waits for a row lock
// another session holds, and its statement is killed (a retry, as after a
// lock wait timeout). The unit is retried from the 151st: the 150 before
// it committed already and are not applied again (each source
// transaction once in the target's binlog), and the run counts 300.
func TestKeepGTIDRetryGoesOnFromTheFirstUncommitted(t *testing.T) {
	ctx := context.Background()
	schema := []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)", "INSERT INTO d.t VALUES (-1, 0)"}
	src, dst, sdb, ddb, tgt, _ := keepGTIDPair(t, append([]string{"SET SESSION sql_log_bin=0"}, schema...)...)
	sandbox.MustExec(t, sdb, "SET SESSION sql_log_bin=1")
	for i := 0; i < 300; i++ {
		if i == 150 {
			sandbox.MustExec(t, sdb, "UPDATE d.t SET v = 1 WHERE id = -1")
			continue
		}
		sandbox.MustExec(t, sdb, fmt.Sprintf("INSERT INTO d.t VALUES (%d, %d)", i, i))
	}
	lock, err := sandbox.MustOpen(t, dst, "").Conn(ctx) // ddb has one connection
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	execConn(t, lock, "BEGIN", "SELECT * FROM d.t WHERE id = -1 FOR UPDATE")
	type result struct {
		st  apply.Stats
		err error
	}
	done := make(chan result, 1)
	go func() {
		st, err := runKeepGTID(t, src, tgt, apply.Config{UnitTxns: 1000})
		done <- result{st, err}
	}()
	var waiting int64
	for deadline := time.Now().Add(5 * time.Minute); waiting == 0; time.Sleep(20 * time.Millisecond) {
		select {
		case r := <-done:
			t.Fatalf("the run ended (%d applied, %v) before the 151st transaction waited for the lock", r.st.Txns, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the 151st transaction never waited for the lock")
		}
		// The applier's statement, waiting for the lock (INNODB_TRX of
		// MariaDB 10.11 does not always list a waiting transaction).
		ddb.QueryRow(`SELECT COALESCE(MAX(ID), 0) FROM information_schema.PROCESSLIST
			WHERE COMMAND = 'Query' AND ID <> CONNECTION_ID() AND TIME >= 2`).Scan(&waiting)
	}
	sandbox.MustExec(t, ddb, fmt.Sprintf("KILL QUERY %d", waiting))
	execConn(t, lock, "COMMIT")
	r := <-done
	if r.err != nil || r.st.Txns != 300 || r.st.Retries == 0 {
		t.Fatalf("run: %d applied, %d retries, %v; want 300 applied after a retry", r.st.Txns, r.st.Retries, r.err)
	}
	if err := verify.Rows(ctx, sdb, ddb); err != nil {
		t.Fatalf("target differs from the source: %v", err)
	}
	if c := status(t, ddb, "binlog_commits")["binlog_commits"]; c != 300 {
		t.Errorf("the target's binlog took %d commits, want 300: each source transaction once", c)
	}
	if s, d := gtidBinlogPos(t, sdb), gtidBinlogPos(t, ddb); s != d {
		t.Errorf("target gtid_binlog_pos %q, source %q", d, s)
	}
}
