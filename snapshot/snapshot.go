// Package snapshot copies a consistent snapshot of a MySQL/MariaDB source
// to a MySQL or PostgreSQL target (prepl copy): the tables created from
// the source's definitions, rows in chunks by primary key, resumable, and
// the snapshot's binlog position stored where `prepl replicate` starts;
// and compares a source with its target (prepl verify).
//
// The package reads the source, plans each table's parts, runs the
// workers and shows the progress; it writes through a Target and reads the
// target's side of a comparison through a Reader, which the backends
// implement (mysql.CopyTarget and postgres.CopyTarget, their
// VerifyReaders) and the caller chooses, as litestream's commands choose a
// replica client. Tables are described by package tabledef. It imports no
// backend: the source is any Source (mysql.Endpoint), its table
// definitions are read by the caller's ParseFunc (postgres.ParseCreateTable).
//
// Locking on the source: commits are blocked (MariaDB: BACKUP STAGE
// BLOCK_COMMIT; MySQL: FLUSH TABLES WITH READ LOCK) only while every
// worker opens its consistent snapshot and the position is read, which
// takes milliseconds; the rows are then read from the snapshots without a lock.
package snapshot

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prepl/prepl/fault"
	"github.com/prepl/prepl/internal/srcpos"
	"github.com/prepl/prepl/progress"
	"github.com/prepl/prepl/tabledef"
)

// Config is one copy.
type Config struct {
	Source Source
	Target Target
	// ParseTable reads the source's table definitions.
	ParseTable ParseFunc
	Channel    string
	Databases  []string // empty: every database but the system ones
	// Tables, when set, selects the tables of those databases by source
	// schema and name (--include and --exclude, as replicate's).
	Tables TableFunc
	// Rename maps the source's schemas to the target's (nil: the same):
	// --rewrite-schema, as replicate and replay take it.
	Rename    Renamer
	Workers   int
	ChunkRows int
	Progress  io.Writer // nil: no progress bar
}

// Position is the snapshot's binlog position.
type Position struct {
	GTIDPos string
	File    string
	Pos     uint32
}

// ErrMoved is returned when a copy resumes but the source has committed
// since the copy began: the chunks already copied and the ones to come
// would be from different snapshots.
var ErrMoved = fault.Fatal(errors.New("the source has moved since the interrupted copy began: its chunks are from an older snapshot; start over with --restart"))

var errNoParse = errors.New("snapshot: no ParseTable to read the source's table definitions")

var systemSchemas = map[string]bool{"mysql": true, "information_schema": true, "performance_schema": true, "sys": true, "prepl": true}

// table is one source table to copy.
type table struct {
	def *tabledef.Table // the source's
	// dst is the target's definition: def, its schema and the schemas
	// its foreign keys reference renamed (Renamer); def itself when
	// nothing is renamed. create is SHOW CREATE TABLE, renamed alike.
	dst    *tabledef.Table
	create string
	key    []string
}

func newTable(def *tabledef.Table, create string) *table {
	t := &table{def: def, dst: def, create: create}
	if k := def.PrimaryKey(); k != nil {
		t.key = k.Columns
	}
	return t
}

// Renamer maps the source's schemas to the target's (--rewrite-schema;
// filter.Filter is one).
type Renamer interface {
	// Rename is the target's name of source schema s.
	Rename(s string) string
	// RenameIn is sql with the schemas of its qualified names renamed.
	RenameIn(sql string) string
}

// renamed sets t's target definition by r (nil: the source's names).
func (t *table) renamed(r Renamer) {
	if r == nil {
		return
	}
	d := *t.def
	d.Schema = r.Rename(d.Schema)
	d.ForeignKeys = append([]tabledef.ForeignKey(nil), d.ForeignKeys...)
	for i := range d.ForeignKeys {
		d.ForeignKeys[i].RefSchema = r.Rename(d.ForeignKeys[i].RefSchema)
	}
	t.dst, t.create = &d, r.RenameIn(t.create)
}

// Run copies; it returns the snapshot position it stored.
func Run(ctx context.Context, cfg Config) (Position, error) {
	if cfg.ParseTable == nil {
		return Position{}, errNoParse
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.ChunkRows <= 0 {
		cfg.ChunkRows = 5000
	}
	src, err := cfg.Source.OpenDB()
	if err != nil {
		return Position{}, err
	}
	defer src.Close()
	src.SetMaxOpenConns(cfg.Workers + 2)
	if err := cfg.Target.Prepare(ctx, cfg.Channel); err != nil {
		return Position{}, fmt.Errorf("prepare target: %w", err)
	}
	conns, pos, err := openSnapshots(ctx, src, cfg.Workers)
	if err != nil {
		return Position{}, err
	}
	defer func() {
		for _, c := range conns {
			c.ExecContext(context.Background(), "ROLLBACK")
			c.Close()
		}
	}()
	prev, started, err := cfg.Target.Snapshot(ctx, cfg.Channel)
	if err != nil {
		return Position{}, err
	}
	if started && prev != pos {
		return Position{}, fmt.Errorf("resume copy (began at %s %s:%d, the source is now at %s %s:%d): %w",
			prev.GTIDPos, prev.File, prev.Pos, pos.GTIDPos, pos.File, pos.Pos, ErrMoved)
	}
	if !started {
		if err := cfg.Target.BeginSnapshot(ctx, cfg.Channel, pos); err != nil {
			return Position{}, err
		}
	}
	tables, err := listTables(ctx, conns[0], cfg.Databases, cfg.Tables, cfg.ParseTable, cfg.Rename)
	if err != nil {
		return Position{}, err
	}
	defs := make([]*tabledef.Table, len(tables))
	for i, t := range tables {
		defs[i] = t.dst
	}
	cfg.Target.NoteForeignKeys(defs)
	var total int64
	estimates := make([]int64, len(tables))
	for i, t := range tables {
		conns[0].QueryRowContext(ctx, "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", t.def.Schema, t.def.Name).Scan(&estimates[i])
		total += estimates[i]
	}
	var work []partOf
	for i, t := range tables {
		n := estimates[i]
		if err := cfg.Target.CreateTable(ctx, cfg.Channel, t.dst, t.create); err != nil {
			return Position{}, fmt.Errorf("create %s.%s on target: %w", t.def.Schema, t.def.Name, err)
		}
		parts, err := cfg.Target.Progress(ctx, cfg.Channel, t.dst)
		if err != nil {
			return Position{}, fmt.Errorf("read the copy's progress of %s.%s on target: %w", t.def.Schema, t.def.Name, err)
		}
		if len(parts) == 0 {
			if parts, err = split(ctx, conns[0], t, n, total, cfg); err != nil {
				return Position{}, fmt.Errorf("split %s.%s in parts: %w", t.def.Schema, t.def.Name, err)
			}
			if err := cfg.Target.PlanParts(ctx, cfg.Channel, t.dst, parts); err != nil {
				return Position{}, fmt.Errorf("record the parts of %s.%s on target: %w", t.def.Schema, t.def.Name, err)
			}
		}
		for _, p := range parts {
			if !p.Done {
				work = append(work, partOf{t, p})
			}
		}
	}
	var done atomic.Int64
	stop := make(chan struct{})
	if cfg.Progress != nil {
		bar := progress.NewBar(progress.NewTerminal(cfg.Progress), "copy", func(n int64) string { return fmt.Sprintf("%d rows", n) })
		go func() {
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					bar.Finish()
					return
				case now := <-tick.C:
					bar.Update(now, done.Load(), total, "")
				}
			}
		}()
	}
	// A table is finished (its keys and indexes built) by the worker that
	// copies its last part, while the others copy on; a table with no
	// part left (a resumed copy) after the workers. Foreign keys wait for
	// every table's keys.
	left := map[*table]*atomic.Int32{} // parts to copy, of the tables with any
	queue := make(chan partOf, len(work))
	for _, w := range work {
		if left[w.t] == nil {
			left[w.t] = new(atomic.Int32)
		}
		left[w.t].Add(1)
		queue <- w
	}
	close(queue)
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, c := range conns {
		wg.Add(1)
		go func(i int, c *sql.Conn) {
			defer wg.Done()
			for w := range queue {
				if errs[i] != nil {
					continue
				}
				if err := copyPart(ctx, cfg, c, w.t, w.p, &done); err != nil {
					errs[i] = fmt.Errorf("copy %s.%s: %w", w.t.def.Schema, w.t.def.Name, err)
				} else if left[w.t].Add(-1) == 0 {
					errs[i] = finishTable(ctx, cfg, w.t)
				}
			}
		}(i, c)
	}
	wg.Wait()
	close(stop)
	if err := errors.Join(errs...); err != nil {
		return Position{}, err
	}
	for _, t := range tables {
		if left[t] == nil {
			if err := finishTable(ctx, cfg, t); err != nil {
				return Position{}, err
			}
		}
	}
	if err := cfg.Target.FinishCopy(ctx, defs); err != nil {
		return Position{}, fmt.Errorf("finish the copy on target: %w", err)
	}
	if err := cfg.Target.StorePosition(ctx, cfg.Channel, pos); err != nil {
		return Position{}, fmt.Errorf("store the snapshot's position on target: %w", err)
	}
	return pos, nil
}

func finishTable(ctx context.Context, cfg Config, t *table) error {
	if err := cfg.Target.FinishTable(ctx, t.dst); err != nil {
		return fmt.Errorf("finish %s.%s on target: %w", t.def.Schema, t.def.Name, err)
	}
	return nil
}

// openSnapshots opens n connections on one consistent snapshot: commits
// are blocked while each starts its transaction and the position is read.
func openSnapshots(ctx context.Context, src *sql.DB, n int) ([]*sql.Conn, Position, error) {
	maria, err := srcpos.IsMariaDB(ctx, src)
	if err != nil {
		return nil, Position{}, fmt.Errorf("connect to source: %w", err)
	}
	lock, err := src.Conn(ctx)
	if err != nil {
		return nil, Position{}, err
	}
	defer lock.Close()
	lockSQL, unlockSQL := []string{"FLUSH TABLES WITH READ LOCK"}, "UNLOCK TABLES"
	if maria {
		lockSQL, unlockSQL = []string{"BACKUP STAGE START", "BACKUP STAGE BLOCK_COMMIT"}, "BACKUP STAGE END"
	}
	for _, q := range lockSQL {
		if _, err := lock.ExecContext(ctx, q); err != nil {
			return nil, Position{}, fmt.Errorf("block commits on source for the snapshot (%s needs the RELOAD privilege): %w", q, err)
		}
	}
	defer lock.ExecContext(context.Background(), unlockSQL)
	var conns []*sql.Conn
	fail := func(err error) ([]*sql.Conn, Position, error) {
		for _, c := range conns {
			c.Close()
		}
		return nil, Position{}, err
	}
	for i := 0; i < n; i++ {
		c, err := src.Conn(ctx)
		if err != nil {
			return fail(err)
		}
		conns = append(conns, c)
		for _, q := range []string{"SET SESSION time_zone = '+00:00'", "SET SESSION sql_mode = ''", "SET NAMES utf8mb4",
			"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return fail(fmt.Errorf("open a snapshot on source: %s: %w", q, err))
			}
		}
	}
	var p Position
	if p.GTIDPos, err = srcpos.GTIDs(ctx, lock, maria); err != nil {
		return fail(fmt.Errorf("read the source's GTID position: %w", err))
	}
	if p.File, p.Pos, err = srcpos.FilePos(ctx, lock); errors.Is(err, srcpos.ErrNoBinlog) {
		return fail(errors.New("the source has no binary log (SHOW MASTER STATUS is empty): replication could not continue from the copy; enable log_bin"))
	} else if err != nil {
		return fail(fmt.Errorf("read the source's binlog position: %w", err))
	}
	return conns, p, nil
}

// TableFunc reports whether a source table is selected.
type TableFunc func(schema, table string) bool

func listTables(ctx context.Context, c *sql.Conn, dbs []string, sel TableFunc, parse ParseFunc, r Renamer) ([]*table, error) {
	rows, err := c.QueryContext(ctx, `SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME`)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, d := range dbs {
		want[d] = true
	}
	var names [][2]string
	for rows.Next() {
		var s, t string
		if err := rows.Scan(&s, &t); err != nil {
			rows.Close()
			return nil, err
		}
		if systemSchemas[strings.ToLower(s)] || (len(want) > 0 && !want[s]) || (sel != nil && !sel(s, t)) {
			continue
		}
		names = append(names, [2]string{s, t})
	}
	rows.Close()
	var out []*table
	for _, n := range names {
		var name, create string
		if err := c.QueryRowContext(ctx, "SHOW CREATE TABLE "+quoteMy(n[0])+"."+quoteMy(n[1])).Scan(&name, &create); err != nil {
			return nil, fmt.Errorf("read the definition of %s.%s: %w", n[0], n[1], err)
		}
		def, err := parse(create, n[0])
		if err != nil {
			return nil, fmt.Errorf("read the definition of %s.%s: %w", n[0], n[1], err)
		}
		t := newTable(def, create)
		t.renamed(r)
		out = append(out, t)
	}
	return out, nil
}

// partOf is one part of a table, a worker's unit of work.
type partOf struct {
	t *table
	p Part
}

// split plans the parts a table of about rows rows (of total in the
// copy) is copied in: a table whose primary key is one integer column and
// that holds at least two chunks is cut into ranges of equal key width
// between its smallest and largest key in the snapshot, copied in
// parallel; any other table is one part, copied in key order (or,
// without a key, in one chunk). A table gets as many parts as it holds
// shares of total/cfg.Workers rows, at most cfg.Workers: the workers
// have a part each to copy, and tables that already keep them busy are
// not cut (parts of one table contend on its pages, and cost a chunk
// query each at their bounds).
func split(ctx context.Context, c *sql.Conn, t *table, rows, total int64, cfg Config) ([]Part, error) {
	n := partCount(rows, total, int64(cfg.Workers), int64(cfg.ChunkRows))
	if n < 2 || len(t.key) != 1 || !intColumn(t.def.Column(t.key[0])) {
		return []Part{{N: 0}}, nil
	}
	var lo, hi sql.NullString
	k := quoteMy(t.key[0])
	if err := c.QueryRowContext(ctx, "SELECT MIN("+k+"), MAX("+k+") FROM "+quoteMy(t.def.Schema)+"."+quoteMy(t.def.Name)).Scan(&lo, &hi); err != nil {
		return nil, err
	}
	min, ok1 := new(big.Int).SetString(lo.String, 10)
	max, ok2 := new(big.Int).SetString(hi.String, 10)
	if !lo.Valid || !ok1 || !ok2 {
		return []Part{{N: 0}}, nil
	}
	// Bounds b_1 < ... < b_n-1 cut (min-1, max] in n ranges; part i holds
	// the keys above b_i up to b_i+1 (the first from the start, the last
	// to the end, so that nothing depends on min and max being exact).
	width := new(big.Int).Sub(max, min)
	width.Add(width, big.NewInt(1))
	if width.Cmp(big.NewInt(n)) < 0 {
		return []Part{{N: 0}}, nil
	}
	parts := make([]Part, n)
	var prev []string
	for i := int64(0); i < n; i++ {
		parts[i] = Part{N: int(i), Last: prev}
		if i < n-1 {
			b := new(big.Int).Mul(width, big.NewInt(i+1))
			b.Div(b, big.NewInt(n))
			b.Add(b, min)
			b.Sub(b, big.NewInt(1))
			prev = []string{b.String()}
			parts[i].Hi = prev
		}
	}
	return parts, nil
}

// partCount is how many parts split cuts a table of rows rows in, of
// total rows in the copy: one per total/workers rows it holds, at most
// workers and at most one per chunk.
func partCount(rows, total, workers, chunkRows int64) int64 {
	n := workers
	if share := total / workers; share > 0 && (rows+share-1)/share < n {
		n = (rows + share - 1) / share
	}
	return min(n, rows/chunkRows)
}

func intColumn(c *tabledef.Column) bool {
	if c == nil {
		return false
	}
	k, err := tabledef.KindOf(c)
	return err == nil && k == tabledef.KindInt
}

// copyPart copies part p of t chunk by chunk in primary key order
// (keyExprs), each chunk committed on the target with the key it reached;
// a table without a primary key (or NOT NULL unique key) is one chunk.
// The source and the target work at once: a reader goroutine selects the
// next chunk while the current one is written, at most one chunk ahead
// (the SELECT of a chunk needs only the last key of the one before).
func copyPart(ctx context.Context, cfg Config, c *sql.Conn, t *table, p Part, done *atomic.Int64) error {
	chunks := make(chan chunk, 1)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(chunks)
		readErr = readPart(ctx, cfg, c, t, p, chunks, stop)
	}()
	err := writePart(ctx, cfg, t, p, chunks, done)
	// The reader stops after its current chunk; it must be gone before
	// the worker's connection reads the next part.
	close(stop)
	for range chunks {
	}
	if err != nil {
		return err
	}
	return readErr
}

// writePart writes the chunks of part p as they come, until the last.
func writePart(ctx context.Context, cfg Config, t *table, p Part, chunks <-chan chunk, done *atomic.Int64) error {
	for ch := range chunks {
		if err := cfg.Target.WriteChunk(ctx, cfg.Channel, t.dst, p.N, ch.rows, ch.last, ch.end); err != nil {
			return err
		}
		done.Add(int64(len(ch.rows)))
		if ch.end {
			return nil
		}
	}
	return nil // the reader failed: its error is copyPart's
}

// readPart reads part p chunk by chunk into out until its last chunk,
// or until stop is closed.
func readPart(ctx context.Context, cfg Config, c *sql.Conn, t *table, p Part, out chan<- chunk, stop <-chan struct{}) error {
	var sel []string
	for i := range t.def.Columns {
		sel = append(sel, SourceExpr(&t.def.Columns[i]))
	}
	keySel := keyExprs(t, false)
	head := "SELECT " + strings.Join(append(sel, keySel...), ", ") + " FROM " + quoteMy(t.def.Schema) + "." + quoteMy(t.def.Name)
	last := p.Last
	size := 0 // of the last chunk's values: the next one's is alike
	for {
		q := head
		if len(t.key) > 0 {
			var where []string
			if last != nil {
				where = append(where, "("+strings.Join(keySel, ",")+") > ("+keyLiterals(t, last)+")")
			}
			if p.Hi != nil { // split parts have one integer key column
				where = append(where, keySel[0]+" <= "+keyLiterals(t, p.Hi))
			}
			if len(where) > 0 {
				q += " WHERE " + strings.Join(where, " AND ")
			}
			q += fmt.Sprintf(" ORDER BY %s LIMIT %d", strings.Join(keySel, ","), cfg.ChunkRows)
		}
		// No arguments: the driver sends the query as text, in one round
		// trip, where one with arguments is prepared, executed and closed.
		rows, err := c.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		ch, err := readChunk(rows, len(sel), len(t.key), cfg.ChunkRows, size)
		if err != nil {
			return err
		}
		size = ch.size
		ch.end = len(t.key) == 0 || len(ch.rows) < cfg.ChunkRows
		if ch.last == nil {
			ch.last = last
		}
		select {
		case out <- ch:
		case <-stop:
			return nil
		}
		if ch.end {
			return nil
		}
		last = ch.last
	}
}

// keyLiterals writes key values (as read through keyExprs) as MySQL
// literals: numbers as they are, binary strings in hex, other strings
// quoted (the copy's sessions have an empty sql_mode: backslashes escape).
func keyLiterals(t *table, key []string) string {
	lits := make([]string, len(key))
	for i, v := range key {
		k, _ := tabledef.KindOf(t.def.Column(t.key[i]))
		switch {
		case keyNumber(k) && tabledef.Numeric(v):
			lits[i] = v
		case k == tabledef.KindBinary:
			lits[i] = "X'" + hex.EncodeToString([]byte(v)) + "'"
		default:
			lits[i] = quoteString(v)
		}
	}
	return strings.Join(lits, ",")
}

// keyNumber: keyExpr reads a key column of kind k as a number.
func keyNumber(k tabledef.Kind) bool {
	switch k {
	case tabledef.KindInt, tabledef.KindDecimal, tabledef.KindFloat, tabledef.KindDouble,
		tabledef.KindBit, tabledef.KindYear, tabledef.KindEnum, tabledef.KindSet:
		return true
	}
	return false
}

// chunk is rows read from the source: their values (nil for NULL) point
// into one buffer per chunk, not one allocation per value.
type chunk struct {
	rows [][][]byte
	last []string // the last row's key; nil when no row
	end  bool     // the part's last chunk
	size int      // bytes of values
}

// readChunk reads rows of ncol values then nkey key values; about n rows
// of size bytes are expected, room made for them at once.
func readChunk(rows *sql.Rows, ncol, nkey, n, size int) (chunk, error) {
	defer rows.Close()
	var ch chunk
	vals := make([]sql.RawBytes, ncol+nkey)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	// Non-nil: an empty value is slab[i:i], which must not read as NULL.
	slab := make([]byte, 0, max(size+size/8, 64<<10))
	ends := make([]int, 0, n*ncol) // each value's end in slab, -1 for NULL
	var key []byte
	var keyEnds []int
	n = 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return ch, err
		}
		for _, v := range vals[:ncol] {
			if v == nil {
				ends = append(ends, -1)
				continue
			}
			slab = append(slab, v...)
			ends = append(ends, len(slab))
		}
		key, keyEnds = key[:0], keyEnds[:0]
		for _, v := range vals[ncol:] {
			key = append(key, v...)
			keyEnds = append(keyEnds, len(key))
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return ch, err
	}
	ch.size = len(slab)
	cells := make([][]byte, len(ends))
	from := 0
	for i, e := range ends {
		if e >= 0 {
			cells[i] = slab[from:e:e]
			from = e
		}
	}
	ch.rows = make([][][]byte, n)
	for r := range ch.rows {
		ch.rows[r] = cells[r*ncol : (r+1)*ncol : (r+1)*ncol]
	}
	if n > 0 {
		ch.last = make([]string, nkey)
		from = 0
		for i, e := range keyEnds {
			ch.last[i] = string(key[from:e])
			from = e
		}
	}
	return ch, nil
}
