package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/txn"
)

// maxBatch bounds one round trip's SQL text.
const maxBatch = 4 << 20

// netRows bounds the rows of one multi-row statement.
const netRows = 1000

// copyRows is the fewest new rows of a table sent with COPY rather than
// a multi-row INSERT: measured on this machine's sandbox (5 columns,
// 2x60000 rows, a commit per statement), COPY took 0.5-0.7 of the
// INSERT's time at 100 and 1000 rows a statement, and about the same at
// 10, where its extra round trip costs what it saves.
const copyRows = 100

// Batch is the SQL of one commit unit, rendered before a worker
// connection is free to send it: BEGIN, then the unit's statements, in
// chunks of about maxBatch bytes sent as one simple query each, with each
// statement's expected result.
type Batch struct {
	chunks []chunk
	saved  int
	ids    []identityMax
	xa     *xaStep // an XA group's, ended by Commit
}

type chunk struct {
	sql    []byte
	expect []expect // one per statement in sql
	// copy, when set, makes the chunk one COPY (sql is its statement,
	// expect its one expectation).
	copy []byte
}

// expect is what a statement must do.
type expect struct {
	rows  int64 // affected rows (0: not checked)
	kind  txn.Kind
	table string
	tx    *txn.Txn
	row   *txn.RowChange // a single row change, named when it diverges
	tb    *table         // and its table
	o     Options
	// compacted statements cover several source rows (a commit unit's net
	// effect); a surprise there re-runs the unit in source order.
	compacted bool
	// upsert: an INSERT ... ON CONFLICT DO UPDATE RETURNING (xmax = 0),
	// whose every row must have existed (returned false).
	upsert bool
}

// Saved counts the source row changes compaction made unnecessary.
func (b *Batch) Saved() int { return b.saved }

// RowEvents implements apply.Batch: PostgreSQL takes SQL only.
func (b *Batch) RowEvents() int { return 0 }

// add appends one statement with its expectation.
func (b *Batch) add(q []byte, e expect) {
	n := len(b.chunks)
	if n == 0 || len(b.chunks[n-1].sql) >= maxBatch || b.chunks[n-1].copy != nil {
		b.chunks = append(b.chunks, chunk{})
		n++
	}
	c := &b.chunks[n-1]
	if len(c.sql) > 0 {
		c.sql = append(c.sql, ";\n"...)
	}
	c.sql = append(c.sql, q...)
	c.expect = append(c.expect, e)
}

// addCopy appends a COPY of data (rows in COPY's text format).
func (b *Batch) addCopy(q string, data []byte, e expect) {
	b.chunks = append(b.chunks, chunk{sql: []byte(q), copy: data, expect: []expect{e}})
}

// failed explains a statement's error.
func (e expect) failed(err error) error {
	var pe *pgconn.PgError
	if e.compacted && errors.As(err, &pe) && pe.Code == "23505" {
		return fmt.Errorf("compacted %s on %s: %w: %w", e.kind, e.table, apply.ErrCompacted, err)
	}
	if e.tx == nil {
		return err
	}
	return fmt.Errorf("apply %s: %s on %s: %w", describe(e.tx), e.kind, e.table, err)
}

// check compares a statement's result with its expectation.
func (e expect) check(r *pgconn.Result) error {
	if e.rows == 0 {
		return nil
	}
	got := r.CommandTag.RowsAffected()
	if e.compacted {
		if got != e.rows {
			return fmt.Errorf("compacted %s on %s affected %d rows, want %d: %w", e.kind, e.table, got, e.rows, apply.ErrCompacted)
		}
		for _, row := range r.Rows {
			if e.upsert && len(row) > 0 && string(row[0]) == "t" {
				return fmt.Errorf("compacted update on %s inserted a row that the source had: %w", e.table, apply.ErrCompacted)
			}
		}
		return nil
	}
	if got != e.rows {
		return fmt.Errorf("apply %s: %s on %s affected %d rows, want %d: the target has diverged from the source%s: %w; "+
			"repair the row on the target and restart, or skip the transaction with --skip-gtid",
			describe(e.tx), e.kind, e.table, got, e.rows, divergedRow(e.row, e.tb, e.o), apply.ErrRowCount)
	}
	return nil
}

// divergedRow names the row a divergence is about by its row key (every
// column without one), as PostgreSQL literals.
func divergedRow(rc *txn.RowChange, tb *table, o Options) string {
	if rc == nil || tb == nil {
		return ""
	}
	img, present := rc.Before, rc.BeforeCols
	if rc.Kind == txn.Insert {
		img, present = rc.After, rc.AfterCols
	}
	w := rowWriter{o: o, tb: tb, types: rc.Table.Types}
	var idx []int
	if k := tb.def.RowKey(); k != nil {
		idx = k.Columns
	} else {
		for i := range tb.src.Columns {
			idx = append(idx, i)
		}
	}
	var parts []string
	for _, i := range idx {
		if i >= len(img) || (present != nil && !present[i]) {
			continue
		}
		v := Literal(w.value(img, i))
		if len(v) > 64 {
			v = v[:60] + "..."
		}
		parts = append(parts, tb.src.Columns[i].Name+"="+v)
	}
	return " (row " + strings.Join(parts, ", ") + ")"
}

// Verbatim is "" for every transaction: PostgreSQL applies rows as SQL
// only (no trigger fires for them, see Target).
func (t *Target) Verbatim(ctx context.Context, tx *txn.Txn) (string, error) { return "", nil }

// Lookup gives compaction the tracker's definitions.
func (t *Target) Lookup(ctx context.Context) compact.Lookup {
	return func(schema, name string) (*txn.TableDef, error) {
		tb := t.Catalog.table(schema, name)
		if tb == nil {
			return nil, fmt.Errorf("table %s.%s: %w", schema, name, ErrNoTable)
		}
		return tb.def, nil
	}
}

// Render writes a unit's batch: an XA group's (renderXA), or planned here
// (compact.PlanUnit), then RenderPlan.
func (t *Target) Render(ctx context.Context, txs []*txn.Txn, compaction bool) (apply.Batch, error) {
	if len(txs) == 1 && txs[0].XA { // an XA group is alone in its unit
		return t.renderXA(ctx, txs[0])
	}
	p, err := compact.PlanUnit(txs, nil, t.Lookup(ctx), compaction)
	if err != nil {
		return nil, err
	}
	return t.RenderPlan(ctx, txs, p)
}

// RenderPlan writes the batch of a planned unit: its runs in order, each
// compacted (net effect per table) or in source order.
func (t *Target) RenderPlan(ctx context.Context, txs []*txn.Txn, p compact.UnitPlan) (apply.Batch, error) {
	b := &Batch{}
	b.add([]byte("BEGIN"), expect{})
	if err := t.renderRuns(b, t.Catalog, p); err != nil {
		return nil, err
	}
	return b, nil
}

// tables is where rendering reads definitions: the catalog, or the
// definitions a DDL transaction just made.
type tables interface {
	table(schema, name string) *table
}

func (t *Target) renderRuns(b *Batch, tbs tables, p compact.UnitPlan) error {
	for _, r := range p.Runs {
		if r.Plan == nil {
			for _, tx := range r.Txs {
				if err := t.renderTxn(b, tbs, tx); err != nil {
					return err
				}
			}
			continue
		}
		for _, s := range r.Plan.Ordered {
			if err := t.renderRow(b, tbs, s.Tx, s.Row); err != nil {
				return err
			}
		}
		if err := t.renderNets(b, tbs, r.Txs[len(r.Txs)-1], r.Plan.Nets); err != nil {
			return err
		}
		b.saved += r.Plan.Dropped
	}
	return nil
}

// renderTxn writes tx's changes in source order.
func (t *Target) renderTxn(b *Batch, tbs tables, tx *txn.Txn) error {
	for _, ch := range tx.Changes {
		if ch.Stmt != nil {
			q, ok := savepointSQL(ch.Stmt.SQL)
			if !ok {
				return fmt.Errorf("apply %s: the source logged a statement as text inside a row transaction (%q), which "+
					"PostgreSQL cannot run as it is: %w; go past it with --skip-gtid", describe(tx), short(ch.Stmt.SQL), ErrNotTranslated)
			}
			b.add([]byte(q), expect{})
			continue
		}
		if err := t.renderRow(b, tbs, tx, ch.Row); err != nil {
			return err
		}
	}
	return nil
}

// savepointSQL translates SAVEPOINT, ROLLBACK TO and RELEASE SAVEPOINT,
// the statements MariaDB logs as text inside a row transaction.
func savepointSQL(q string) (string, bool) {
	w := txn.LeadingWords(q, 2)
	if len(w) == 0 {
		return "", false
	}
	switch strings.ToUpper(w[0]) {
	case "SAVEPOINT", "RELEASE":
	case "ROLLBACK":
		if len(w) < 2 || !strings.EqualFold(w[1], "TO") {
			return "", false
		}
	default:
		return "", false
	}
	return strings.ReplaceAll(strings.TrimSpace(q), "`", `"`), true
}

// lookupRow returns the table of a row change.
func lookupRow(tbs tables, tx *txn.Txn, rc *txn.RowChange) (*table, error) {
	tb := tbs.table(rc.Table.Schema, rc.Table.Name)
	if tb == nil {
		return nil, fmt.Errorf("apply %s: table %s: %w", describe(tx), rc.Table.QualifiedName(), ErrNoTable)
	}
	if len(tb.src.Columns) != len(rc.Table.Types) {
		return nil, fmt.Errorf("apply %s: table %s has %d columns in prepl's catalog but %d in the binlog", describe(tx),
			rc.Table.QualifiedName(), len(tb.src.Columns), len(rc.Table.Types))
	}
	return tb, nil
}

// renderRow writes one row change by its row key (the primary key, or a
// unique key of NOT NULL columns); a table without one is matched on
// every column of the before image, one row of it (ctid), as MySQL
// changes one row of identical ones.
func (t *Target) renderRow(b *Batch, tbs tables, tx *txn.Txn, rc *txn.RowChange) error {
	tb, err := lookupRow(tbs, tx, rc)
	if err != nil {
		return err
	}
	w := rowWriter{o: t.Opts, tb: tb, types: rc.Table.Types}
	name := Table(tb.src.Schema, tb.src.Name, t.Opts)
	var q []byte
	switch rc.Kind {
	case txn.Insert:
		b.noteIdentity(&w, name, rc.After, rc.AfterCols)
		q = append(q, "INSERT INTO "+name+" ("...)
		q = w.columns(q, rc.AfterCols, ", ", nil)
		q = append(q, ") VALUES ("...)
		q = w.columns(q, rc.AfterCols, ", ", w.literal(rc.After))
		q = append(q, ')')
	case txn.Update:
		b.noteIdentity(&w, name, rc.After, rc.AfterCols)
		q = append(q, "UPDATE "+name+" SET "...)
		q = w.columns(q, rc.AfterCols, ", ", w.assign(rc.After))
		q = w.where(append(q, " WHERE "...), name, rc)
	case txn.Delete:
		q = w.where(append(q, "DELETE FROM "+name+" WHERE "...), name, rc)
	default:
		return fmt.Errorf("apply %s: row change of kind %s", describe(tx), rc.Kind)
	}
	if w.err != nil {
		return fmt.Errorf("apply %s: table %s: %w", describe(tx), rc.Table.QualifiedName(), w.err)
	}
	b.add(q, expect{rows: 1, kind: rc.Kind, table: rc.Table.QualifiedName(), tx: tx, row: rc, tb: tb, o: t.Opts})
	return nil
}

// rowWriter writes a table's column lists and values; the first error
// is kept in err.
type rowWriter struct {
	o     Options
	tb    *table
	types []byte // binlog column types of the images
	err   error
}

// columns writes each column present in img (nil: every column) with f,
// separated by sep.
func (w *rowWriter) columns(q []byte, img []bool, sep string, f func(q []byte, i int) []byte) []byte {
	first := true
	for i := range w.tb.src.Columns {
		if img != nil && (i >= len(img) || !img[i]) {
			continue
		}
		if !first {
			q = append(q, sep...)
		}
		first = false
		if f == nil {
			q = append(q, w.ident(i)...)
			continue
		}
		q = f(q, i)
	}
	return q
}

func (w *rowWriter) ident(i int) string { return Ident(w.tb.src.Columns[i].Name, w.o) }

// value is column i of row as PostgreSQL text.
func (w *rowWriter) value(row []txn.Value, i int) (string, bool) {
	text, null, err := FromValue(row[i], w.types[i], &w.tb.src.Columns[i], w.o)
	if err != nil && w.err == nil {
		w.err = err
	}
	return text, null
}

// literal writes column i of row as a literal.
func (w *rowWriter) literal(row []txn.Value) func(q []byte, i int) []byte {
	return func(q []byte, i int) []byte { return append(q, Literal(w.value(row, i))...) }
}

// assign writes "col = literal".
func (w *rowWriter) assign(row []txn.Value) func(q []byte, i int) []byte {
	return func(q []byte, i int) []byte {
		return append(append(q, w.ident(i)+" = "...), Literal(w.value(row, i))...)
	}
}

// match writes "col = literal", or "col IS NULL".
func (w *rowWriter) match(row []txn.Value) func(q []byte, i int) []byte {
	return func(q []byte, i int) []byte {
		text, null := w.value(row, i)
		if null {
			return append(q, w.ident(i)+" IS NULL"...)
		}
		return append(append(q, w.ident(i)+" = "...), QuoteString(text)...)
	}
}

// where writes the condition that finds rc's row from its before image.
func (w *rowWriter) where(q []byte, name string, rc *txn.RowChange) []byte {
	if k := w.tb.def.RowKey(); k != nil && present(rc.BeforeCols, k.Columns) {
		img := make([]bool, len(w.tb.src.Columns))
		for _, c := range k.Columns {
			img[c] = true
		}
		return w.columns(q, img, " AND ", w.match(rc.Before))
	}
	q = append(q, "ctid = (SELECT ctid FROM "+name+" WHERE "...)
	q = w.columns(q, rc.BeforeCols, " AND ", w.match(rc.Before))
	return append(q, " LIMIT 1)"...)
}

func present(img []bool, cols []int) bool {
	for _, c := range cols {
		if img != nil && (c >= len(img) || !img[c]) {
			return false
		}
	}
	return true
}

// renderNets writes each compacted table's net effect: its deletes, its
// inserts, its overwrites, as multi-row statements.
func (t *Target) renderNets(b *Batch, tbs tables, tx *txn.Txn, nets []*compact.Net) error {
	for _, n := range nets {
		tb := tbs.table(n.Map.Schema, n.Map.Name)
		if tb == nil {
			return fmt.Errorf("apply %s: table %s: %w", describe(tx), n.Map.QualifiedName(), ErrNoTable)
		}
		w := rowWriter{o: t.Opts, tb: tb, types: n.Map.Types}
		name := Table(tb.src.Schema, tb.src.Name, t.Opts)
		key := tb.def.RowKey()
		for _, st := range []struct {
			kind txn.Kind
			rows [][]txn.Value
		}{{txn.Delete, n.Deletes}, {txn.Insert, n.Inserts}, {txn.Update, n.Updates}} {
			if st.kind != txn.Delete {
				for _, row := range st.rows {
					b.noteIdentity(&w, name, row, nil)
				}
			}
			for len(st.rows) > 0 {
				k := min(len(st.rows), netRows)
				e := expect{rows: int64(k), kind: st.kind, table: n.Map.QualifiedName(), tx: tx, compacted: true, upsert: st.kind == txn.Update}
				var q []byte
				switch {
				case st.kind == txn.Delete:
					q = w.netDelete(name, key, st.rows[:k])
				case st.kind == txn.Insert && k >= copyRows:
					q = append(w.columns([]byte("COPY "+name+" ("), nil, ", ", nil), ") FROM STDIN"...)
					data := w.copyData(st.rows[:k])
					if w.err == nil {
						b.addCopy(string(q), data, e)
					}
					q = nil
				default:
					q = w.netInsert(name, key, st.rows[:k], st.kind == txn.Update)
				}
				if w.err != nil {
					return fmt.Errorf("apply %s: table %s: %w", describe(tx), n.Map.QualifiedName(), w.err)
				}
				if q != nil {
					b.add(q, e)
				}
				st.rows = st.rows[k:]
			}
		}
	}
	return nil
}

// copyData writes rows in COPY's text format.
func (w *rowWriter) copyData(rows [][]txn.Value) []byte {
	var data []byte
	for _, row := range rows {
		for i := range w.tb.src.Columns {
			if i > 0 {
				data = append(data, '\t')
			}
			text, null := w.value(row, i)
			data = AppendCopy(data, text, null)
		}
		data = append(data, '\n')
	}
	return data
}

// netDelete is DELETE ... WHERE (key) IN (...).
func (w *rowWriter) netDelete(name string, key *txn.IndexDef, rows [][]txn.Value) []byte {
	q := []byte("DELETE FROM " + name + " WHERE (")
	img := w.keyImage(key)
	q = w.columns(q, img, ", ", nil)
	q = w.tuples(append(q, ") IN ("...), img, rows)
	return append(q, ')')
}

// tuples writes "(v, ...), (v, ...)": the columns of img (nil: all) of
// each row.
func (w *rowWriter) tuples(q []byte, img []bool, rows [][]txn.Value) []byte {
	for r, row := range rows {
		if r > 0 {
			q = append(q, ", "...)
		}
		q = append(q, '(')
		q = w.columns(q, img, ", ", w.literal(row))
		q = append(q, ')')
	}
	return q
}

// netInsert is a multi-row INSERT of full images; overwrite makes it
// INSERT ... ON CONFLICT (key) DO UPDATE, returning for each row whether
// it was inserted (xmax = 0): an overwrite must find its row.
func (w *rowWriter) netInsert(name string, key *txn.IndexDef, rows [][]txn.Value, overwrite bool) []byte {
	q := []byte("INSERT INTO " + name + " (")
	q = w.columns(q, nil, ", ", nil)
	q = w.tuples(append(q, ") VALUES "...), nil, rows)
	if !overwrite {
		return q
	}
	q = append(q, " ON CONFLICT ("...)
	q = append(q, w.conflictTarget(key)...)
	q = append(q, ") DO UPDATE SET "...)
	set := w.keyImage(key) // the columns besides the key; all when there are none
	for i := range set {
		set[i] = !set[i]
	}
	if !slices.Contains(set, true) {
		set = nil
	}
	q = w.columns(q, set, ", ", func(q []byte, i int) []byte { return append(q, w.ident(i)+" = EXCLUDED."+w.ident(i)...) })
	return append(q, " RETURNING (xmax = 0)"...)
}

func (w *rowWriter) keyImage(key *txn.IndexDef) []bool {
	img := make([]bool, len(w.tb.src.Columns))
	for _, c := range key.Columns {
		img[c] = true
	}
	return img
}

// conflictTarget names the unique index of the row key the way
// PostgreSQL infers it: its columns, or its expressions for a prefix.
func (w *rowWriter) conflictTarget(key *txn.IndexDef) string {
	for _, ix := range w.tb.src.Indexes {
		if ix.Name == key.Name {
			s, err := indexColumns(w.tb.src, ix, w.o, true)
			if err != nil && w.err == nil {
				w.err = err
			}
			return s
		}
	}
	return string(w.columns(nil, w.keyImage(key), ", ", nil))
}
