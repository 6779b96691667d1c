// Package benchlog gives prepl's micro-benchmarks a real binlog to read:
// sysbench-shaped workloads written by a sandbox MariaDB, the same shapes
// as `prepl bench` (oltp: an index update, a non-index update, a delete
// and an insert of one row per transaction; update-index: one index
// update per transaction) on a table like sysbench's sbtest1.
//
// The binlogs are made once and kept under os.TempDir() (a directory
// named for the workload version), so that every benchmark run, before
// and after a change, reads the same bytes.
package benchlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// Workload names a binlog: "oltp" or "update-index".
type Workload string

const (
	OLTP        Workload = "oltp"
	UpdateIndex Workload = "update-index"
)

// Workloads are the binlogs every benchmark reads.
var Workloads = []Workload{OLTP, UpdateIndex}

// Sizes of the binlogs: transactions per workload, rows in the table.
const (
	oltpTxns   = 2000
	updateTxns = 5000
	tableRows  = 10000
)

// version names the cache directory: change it when the workload changes.
const version = "v1"

// File returns the path of w's binlog, made with a sandbox server the
// first time on this machine.
func File(tb testing.TB, w Workload) string {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), "prepl-benchlog-"+version)
	path := filepath.Join(dir, string(w)+".000001")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := generate(dir); err != nil {
		tb.Fatalf("benchlog: %v", err)
	}
	return path
}

// Schema is the database of the workload's table.
const Schema = "sbtest"

// Table is sbtest.sbtest1 as the target declares it: sysbench's table
// (id INT PRIMARY KEY, k INT with a non-unique index, c CHAR(120), pad
// CHAR(60)), latin1.
func Table() *txn.TableDef {
	text := func(name string) txn.ColumnDef {
		return txn.ColumnDef{Name: name, DataType: "char", Charset: "latin1", Collation: "latin1_swedish_ci"}
	}
	return &txn.TableDef{
		Schema: Schema, Name: "sbtest1", Transactional: true,
		Columns: []txn.ColumnDef{{Name: "id", DataType: "int"}, {Name: "k", DataType: "int"}, text("c"), text("pad")},
		Indexes: []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: []int{0}}},
	}
}

// Catalog holds Table.
type Catalog map[string]*txn.TableDef

// NewCatalog returns a catalog of Table.
func NewCatalog() Catalog {
	d := Table()
	return Catalog{d.QualifiedName(): d}
}

// Table implements txn.Catalog.
func (c Catalog) Table(schema, name string) (*txn.TableDef, bool) {
	d, ok := c[schema+"."+name]
	return d, ok
}

const createTable = `CREATE TABLE sbtest.sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0,
	c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k))
	ENGINE=InnoDB DEFAULT CHARSET=latin1`

// generate writes both binlogs into dir (atomically: a concurrent run
// makes the same files).
func generate(dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o := sandbox.Defaults()
	o.Binlog = true
	o.BinlogRowMetadata = "FULL"
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 0
	s, err := sandbox.Start(ctx, o)
	if err != nil {
		return err
	}
	defer s.Close()
	db, err := s.Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rng := rand.New(rand.NewPCG(17, 2026))
	if err := prepare(ctx, db, rng); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, w := range Workloads {
		if _, err := db.ExecContext(ctx, "FLUSH BINARY LOGS"); err != nil {
			return err
		}
		files, err := s.BinlogFiles()
		if err != nil {
			return err
		}
		if err := run(ctx, db, rng, w); err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
		if _, err := db.ExecContext(ctx, "FLUSH BINARY LOGS"); err != nil {
			return err
		}
		if err := install(files[len(files)-1], filepath.Join(dir, string(w)+".000001")); err != nil {
			return err
		}
	}
	return nil
}

func install(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp%d", dst, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func prepare(ctx context.Context, db *sql.DB, rng *rand.Rand) error {
	for _, q := range []string{"CREATE DATABASE sbtest", createTable} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	for from := 1; from <= tableRows; from += 500 {
		var vals []string
		for id := from; id < from+500 && id <= tableRows; id++ {
			vals = append(vals, fmt.Sprintf("(%d,%d,'%s','%s')", id, rng.IntN(tableRows)+1, digits(rng, 10), digits(rng, 5)))
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO sbtest.sbtest1 VALUES "+strings.Join(vals, ",")); err != nil {
			return err
		}
	}
	return nil
}

// digits is sysbench's c and pad text: groups of 11 digits joined by '-'.
func digits(rng *rand.Rand, groups int) string {
	var b strings.Builder
	for g := range groups {
		if g > 0 {
			b.WriteByte('-')
		}
		for range 11 {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	return b.String()
}

// id picks a row as sysbench's default "special" distribution does: most
// accesses go to a few hot rows.
func id(rng *rand.Rand) int {
	if rng.IntN(4) < 3 {
		return rng.IntN(tableRows/100) + 1
	}
	return rng.IntN(tableRows) + 1
}

func run(ctx context.Context, db *sql.DB, rng *rand.Rand, w Workload) error {
	if w == UpdateIndex {
		for range updateTxns {
			if _, err := db.ExecContext(ctx, fmt.Sprintf("UPDATE sbtest.sbtest1 SET k=k+1 WHERE id=%d", id(rng))); err != nil {
				return err
			}
		}
		return nil
	}
	for range oltpTxns {
		del := id(rng)
		stmts := []string{
			"BEGIN",
			fmt.Sprintf("UPDATE sbtest.sbtest1 SET k=k+1 WHERE id=%d", id(rng)),
			fmt.Sprintf("UPDATE sbtest.sbtest1 SET c='%s' WHERE id=%d", digits(rng, 10), id(rng)),
			fmt.Sprintf("DELETE FROM sbtest.sbtest1 WHERE id=%d", del),
			fmt.Sprintf("INSERT INTO sbtest.sbtest1 (id, k, c, pad) VALUES (%d, %d, '%s', '%s')", del, rng.IntN(tableRows)+1,
				digits(rng, 10), digits(rng, 5)),
			"COMMIT",
		}
		for _, q := range stmts {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return err
			}
		}
	}
	return nil
}

// PerFile runs a benchmark of each workload's binlog file: one op is
// run(path), which returns the transactions and row changes it handled.
func PerFile(b *testing.B, run func(b *testing.B, path string) (txns, rows int)) {
	for _, w := range Workloads {
		b.Run(string(w), func(b *testing.B) {
			path := File(b, w)
			txns, rows := run(b, path)
			m := Start(b)
			for range b.N {
				run(b, path)
			}
			m.Report(txns, rows)
		})
	}
}

// Meter counts a benchmark's time and allocations per transaction and
// per row, beside go test's per-op figures: start it after the set-up,
// Report after the loop.
type Meter struct {
	b       *testing.B
	mallocs uint64
	bytes   uint64
}

// Start resets the benchmark's timer and starts counting.
func Start(b *testing.B) *Meter {
	b.ReportAllocs()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ResetTimer()
	return &Meter{b: b, mallocs: ms.Mallocs, bytes: ms.TotalAlloc}
}

// Report adds ns/txn, allocs/row and B/row for txns transactions and
// rows row changes per op.
func (m *Meter) Report(txns, rows int) {
	m.b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	n := float64(m.b.N)
	if txns > 0 {
		m.b.ReportMetric(float64(m.b.Elapsed().Nanoseconds())/n/float64(txns), "ns/txn")
	}
	if rows > 0 {
		m.b.ReportMetric(float64(ms.Mallocs-m.mallocs)/n/float64(rows), "allocs/row")
		m.b.ReportMetric(float64(ms.TotalAlloc-m.bytes)/n/float64(rows), "B/row")
	}
}

// Txns returns w's transactions, decoded, and their row changes.
func Txns(tb testing.TB, w Workload) ([]*txn.Txn, int) {
	tb.Helper()
	var txs []*txn.Txn
	_, rows := Read(tb, File(tb, w), func(tx *txn.Txn) { txs = append(txs, tx) })
	return txs, rows
}

// Read decodes the binlog file path as `prepl replay` does, hands each
// transaction to f, and counts transactions and row changes.
func Read(tb testing.TB, path string, f func(*txn.Txn)) (txns, rows int) {
	tb.Helper()
	r, err := fileset.Open([]string{path}, fileset.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	for {
		tx, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return txns, rows
		}
		if err != nil {
			tb.Fatal(err)
		}
		txns++
		rows += tx.Rows()
		f(tx)
	}
}

// UnitTxns is the commit unit of the micro-benchmarks: prepl's default
// --commit-unit until 2026-11-26 (now sequencer.DefaultUnitTxns), kept so
// that their figures in docs/benchmarks.md still compare.
const UnitTxns = 500

// Units groups txs into commit units as prepl's sequencer does with its
// defaults: consecutive transactions that depend.CanJoin admits, up to
// UnitTxns of them.
func Units(txs []*txn.Txn, max int) [][]*txn.Txn {
	var units [][]*txn.Txn
	var cur []*txn.Txn
	for _, tx := range txs {
		if len(cur) > 0 && (len(cur) == max || !depend.CanJoin(depend.Writeset, cur[0], cur[len(cur)-1], tx)) {
			units = append(units, cur)
			cur = nil
		}
		cur = append(cur, tx)
	}
	if len(cur) > 0 {
		units = append(units, cur)
	}
	return units
}
