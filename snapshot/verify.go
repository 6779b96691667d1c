package snapshot

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/prepl/prepl/tabledef"
)

// Difference is one row that differs between source and target.
type Difference struct {
	Table  string // schema.table on the source
	Key    string // the row's primary key, "col=value, ..."
	Detail string
}

func (d Difference) String() string { return d.Table + " " + d.Key + ": " + d.Detail }

// VerifyConfig is one comparison.
type VerifyConfig struct {
	Source Source
	// Target reads the target's side: mysql.OpenVerifyReader or
	// postgres.OpenVerifyReader, chosen by the caller.
	Target Reader
	// ParseTable reads the source's table definitions.
	ParseTable ParseFunc
	Databases  []string
	Tables     TableFunc // nil: every table of Databases
	ChunkRows  int
	Max        int // stop after this many differences (0: 100)
	// Rename maps the source's schemas to the target's (nil: the same).
	Rename Renamer
	// Fix, when set, gets the statements that make the target equal to
	// the source, for every difference: then Verify compares every
	// table, and Max bounds only the differences it returns.
	Fix *FixWriter
	// Settle, when set, says the target is being replicated to while it
	// is compared (prepl verify --online): a chunk that differs is
	// compared again once the target has applied what the source had
	// written when it was read (settle).
	Settle Settler
}

// Settler follows the replication into the target for Verify.
type Settler interface {
	// SourcePosition is the GTID position the source has written now.
	SourcePosition(ctx context.Context) (string, error)
	// WaitApplied returns once the target has applied every transaction
	// of pos, or an error saying it did not in time.
	WaitApplied(ctx context.Context, pos string) error
}

// SettleTries is how many times a range of one row that the source
// changes at every comparison is compared before it is reported.
const SettleTries = 5

// Verify compares every source table with the target, chunk by chunk of
// primary key: each side's chunk is hashed (values normalized by the type
// mapping), and only a chunk whose hashes differ is compared row by row.
// Both sides are read on the client: the hashes save the row-by-row
// comparison, not the reads. Tables without a primary key are one chunk,
// compared as sorted multisets of rows.
func Verify(ctx context.Context, cfg VerifyConfig) ([]Difference, error) {
	if cfg.ParseTable == nil {
		return nil, errNoParse
	}
	if cfg.ChunkRows <= 0 {
		cfg.ChunkRows = 5000
	}
	if cfg.Max <= 0 {
		cfg.Max = 100
	}
	src, err := cfg.Source.OpenDB()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	sc, err := src.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to source: %w", err)
	}
	defer sc.Close()
	if err := setReadSession(ctx, sc); err != nil {
		return nil, err
	}
	tables, err := listTables(ctx, sc, cfg.Databases, cfg.Tables, cfg.ParseTable, cfg.Rename)
	if err != nil {
		return nil, err
	}
	if cfg.Fix != nil {
		cfg.Fix.begin(cfg.Target.Dialect())
	}
	var diffs []Difference
	for _, t := range tables {
		d, err := verifyTable(ctx, cfg, &myReader{c: sc}, cfg.Target, t, cfg.Max-len(diffs))
		if err != nil {
			return diffs, fmt.Errorf("verify %s.%s: %w", t.def.Schema, t.def.Name, err)
		}
		diffs = append(diffs, d...)
		if len(diffs) >= cfg.Max {
			diffs = diffs[:cfg.Max]
			if cfg.Fix == nil {
				return diffs, nil
			}
		}
	}
	return diffs, nil
}

// setReadSession sets the session a MySQL side is read in.
func setReadSession(ctx context.Context, c *sql.Conn) error {
	for _, q := range []string{"SET SESSION time_zone = '+00:00'", "SET NAMES utf8mb4"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// Reader reads a target's side of a comparison: values in a canonical
// text (nil for NULL) that the source's values are converted to as well.
type Reader interface {
	// Rows reads t's rows with a key above after (nil: from the first)
	// up to upTo (nil: to the last), in the source's bytewise key order
	// (keyExpr), a row's values in t's column order.
	Rows(ctx context.Context, t *tabledef.Table, after, upTo *Bound) ([][]*string, error)
	// FromSource is a source value (raw, read through SourceExpr) in the
	// canonical text Rows gives; nil for a value stored as NULL.
	FromSource(c *tabledef.Column, raw []byte) *string
	// Dialect is how the target's SQL says the statements of --fix-sql.
	Dialect() Dialect
}

// Bound is a source row's key, where a chunk ends: as arguments of the
// MySQL key order (keyExpr, bytewise), and as the key columns' canonical
// text.
type Bound struct {
	Key  []any
	Text []string
}

// verifyTable compares table t, returning at most room differences: it
// stops there unless cfg.Fix is to get the fixes of the whole table.
func verifyTable(ctx context.Context, cfg VerifyConfig, src *myReader, dst Reader, t *table, room int) ([]Difference, error) {
	name := t.def.Schema + "." + t.def.Name
	var diffs []Difference
	var after *Bound
	for {
		limit := cfg.ChunkRows
		if len(t.key) == 0 {
			limit = 0
		}
		s, last, err := src.rowsCanon(ctx, t, after, limit, dst)
		if err != nil {
			return nil, fmt.Errorf("source: %w", err)
		}
		var upTo *Bound
		end := len(t.key) == 0 || len(s) < cfg.ChunkRows
		if !end {
			upTo = &Bound{Key: last, Text: keyValues(t, s[len(s)-1])}
		}
		d, err := dst.Rows(ctx, t.dst, after, upTo)
		if err != nil {
			return nil, fmt.Errorf("target: %w", err)
		}
		if hashRows(s) != hashRows(d) {
			if cfg.Settle != nil {
				d, err := settle(ctx, cfg, src, dst, t, after, upTo, 0)
				if err != nil {
					return nil, err
				}
				diffs = append(diffs, d...)
			} else {
				diffs = append(diffs, diffRows(name, t, s, d)...)
				if cfg.Fix != nil {
					cfg.Fix.chunk(t, s, d)
				}
			}
			if len(diffs) >= room {
				diffs = diffs[:room]
				if cfg.Fix == nil {
					return diffs, nil
				}
			}
		}
		if end {
			return diffs, nil
		}
		after = upTo
	}
}

// settle compares the range (after, upTo] of t while the target is
// replicated to: the source's rows are read with the position the source
// had then; once the target has applied that position its rows are read,
// then the source's again. The range is equal if the target's rows are
// the source's of either read (it applied that far, or the later change
// too), and differs for real if the source's two reads agree and the
// target's rows are not theirs (the target has applied all the source
// had, and the source has not changed them since). Otherwise the source
// changed the range while it was compared: the range is split at its
// middle row and each half settled alone, down to one row, which is
// compared up to SettleTries times before its last difference is
// reported as such.
func settle(ctx context.Context, cfg VerifyConfig, src *myReader, dst Reader, t *table, after, upTo *Bound, tries int) ([]Difference, error) {
	name := t.def.Schema + "." + t.def.Name
	read := func() ([][]*string, [][]any, error) {
		rows, err := src.query(ctx, t, after, upTo, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("source: %w", err)
		}
		var keys [][]any
		s, _, err := scanKeys(rows, t, dst.FromSource, &keys)
		return s, keys, err
	}
	v1, _, err := read()
	if err != nil {
		return nil, err
	}
	pos, err := cfg.Settle.SourcePosition(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the source's position: %w", err)
	}
	if err := cfg.Settle.WaitApplied(ctx, pos); err != nil {
		return nil, err
	}
	d, err := dst.Rows(ctx, t.dst, after, upTo)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	v2, keys, err := read()
	if err != nil {
		return nil, err
	}
	h, h1, h2 := hashRows(d), hashRows(v1), hashRows(v2)
	switch {
	case h == h1 || h == h2:
		return nil, nil
	case h1 == h2 || tries+1 >= SettleTries:
		diffs := diffRows(name, t, v2, d)
		if h1 != h2 {
			for i := range diffs {
				diffs[i].Detail += fmt.Sprintf(" (the source changed it at each of %d comparisons)", SettleTries)
			}
		}
		if cfg.Fix != nil {
			cfg.Fix.chunk(t, v2, d)
		}
		return diffs, nil
	case len(v2) > 1 && len(t.key) > 0:
		m := len(v2)/2 - 1
		mid := &Bound{Key: keys[m], Text: keyValues(t, v2[m])}
		left, err := settle(ctx, cfg, src, dst, t, after, mid, 0)
		if err != nil {
			return nil, err
		}
		right, err := settle(ctx, cfg, src, dst, t, mid, upTo, 0)
		return append(left, right...), err
	}
	return settle(ctx, cfg, src, dst, t, after, upTo, tries+1)
}

func keyValues(t *table, row []*string) []string {
	var out []string
	for _, k := range t.key {
		for i := range t.def.Columns {
			if t.def.Columns[i].Name == k {
				out = append(out, deref(row[i]))
			}
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

func rowText(r []*string) string {
	var b strings.Builder
	for i, v := range r {
		if i > 0 {
			b.WriteByte(0)
		}
		if v == nil {
			b.WriteString("\x01N")
		} else {
			b.WriteString(strconv.Quote(*v))
		}
	}
	return b.String()
}

// hashRows hashes a chunk as a multiset of rows.
func hashRows(rows [][]*string) [32]byte {
	texts := make([]string, len(rows))
	for i, r := range rows {
		texts[i] = rowText(r)
	}
	sort.Strings(texts)
	return sha256.Sum256([]byte(strings.Join(texts, "\n")))
}

func diffRows(table string, t *table, s, d [][]*string) []Difference {
	keyOfRow := func(r []*string) string {
		if len(t.key) == 0 {
			return rowText(r)
		}
		var parts []string
		for i, k := range keyValues(t, r) {
			parts = append(parts, t.key[i]+"="+k)
		}
		return strings.Join(parts, ", ")
	}
	src := map[string][][]*string{}
	var order []string
	for _, r := range s {
		k := keyOfRow(r)
		if _, ok := src[k]; !ok {
			order = append(order, k)
		}
		src[k] = append(src[k], r)
	}
	dst := map[string][][]*string{}
	for _, r := range d {
		k := keyOfRow(r)
		if _, ok := src[k]; !ok && dst[k] == nil {
			order = append(order, k)
		}
		dst[k] = append(dst[k], r)
	}
	var out []Difference
	label := func(k string) string {
		if len(t.key) == 0 {
			return "(row without key)"
		}
		return k
	}
	for _, k := range order {
		a, b := src[k], dst[k]
		switch {
		case len(a) > len(b):
			out = append(out, Difference{table, label(k), "missing on target"})
		case len(a) < len(b):
			out = append(out, Difference{table, label(k), "extra on target"})
		case len(t.key) > 0:
			for i := range t.def.Columns {
				x, y := a[0][i], b[0][i]
				if (x == nil) != (y == nil) || (x != nil && *x != *y) {
					out = append(out, Difference{table, label(k), fmt.Sprintf("column %s: source %s, target %s", t.def.Columns[i].Name, show(x), show(y))})
				}
			}
		}
	}
	return out
}

func show(s *string) string {
	if s == nil {
		return "NULL"
	}
	if len(*s) > 64 {
		return strconv.Quote((*s)[:64]) + "..."
	}
	return strconv.Quote(*s)
}

// myReader reads a MySQL side through SourceExpr: the source, or a
// MySQL/MariaDB target (NewMySQLReader).
type myReader struct{ c *sql.Conn }

// NewMySQLReader reads a MySQL/MariaDB target on c as the source is read;
// it sets c's session.
func NewMySQLReader(ctx context.Context, c *sql.Conn) (Reader, error) {
	if err := setReadSession(ctx, c); err != nil {
		return nil, err
	}
	return &myReader{c: c}, nil
}

// FromSource: a MySQL target's values read as the source's are.
func (m *myReader) FromSource(c *tabledef.Column, raw []byte) *string {
	s := string(raw)
	return &s
}

// query selects t's columns, then its key in the bytewise key order,
// by which it orders and bounds the rows.
func (m *myReader) query(ctx context.Context, t *table, after, upTo *Bound, limit int) (*sql.Rows, error) {
	var sel []string
	for i := range t.def.Columns {
		sel = append(sel, SourceExpr(&t.def.Columns[i]))
	}
	keys := keyExprs(t, true)
	q := "SELECT " + strings.Join(append(sel, keys...), ", ") + " FROM " + quoteMy(t.def.Schema) + "." + quoteMy(t.def.Name)
	var where []string
	var args []any
	marks := strings.TrimSuffix(strings.Repeat("?,", len(keys)), ",")
	if after != nil {
		where = append(where, "("+strings.Join(keys, ",")+") > ("+marks+")")
		args = append(args, after.Key...)
	}
	if upTo != nil {
		where = append(where, "("+strings.Join(keys, ",")+") <= ("+marks+")")
		args = append(args, upTo.Key...)
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if len(keys) > 0 {
		q += " ORDER BY " + strings.Join(keys, ",")
	}
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	return m.c.QueryContext(ctx, q, args...)
}

// scanRaw reads rows of query: each row's columns through f, and the
// last row's key in the key order (keyExpr, bytewise).
func scanRaw(rows *sql.Rows, t *table, f func(c *tabledef.Column, raw []byte) *string) ([][]*string, []any, error) {
	return scanKeys(rows, t, f, nil)
}

// scanKeys is scanRaw that also appends each row's key to keys, when not
// nil.
func scanKeys(rows *sql.Rows, t *table, f func(c *tabledef.Column, raw []byte) *string, keys *[][]any) ([][]*string, []any, error) {
	defer rows.Close()
	n := len(t.def.Columns)
	vals := make([]sql.RawBytes, n+len(t.key))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]*string
	var last []any
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		row := make([]*string, n)
		for i, v := range vals[:n] {
			if v == nil {
				continue
			}
			row[i] = f(&t.def.Columns[i], v)
		}
		out = append(out, row)
		last = last[:0]
		for _, v := range vals[n:] {
			last = append(last, string(v))
		}
		if keys != nil {
			*keys = append(*keys, slices.Clone(last))
		}
	}
	return out, last, rows.Err()
}

func (m *myReader) Rows(ctx context.Context, d *tabledef.Table, after, upTo *Bound) ([][]*string, error) {
	t := newTable(d, "")
	rows, err := m.query(ctx, t, after, upTo, 0)
	if err != nil {
		return nil, err
	}
	out, _, err := scanRaw(rows, t, m.FromSource)
	return out, err
}

// rowsCanon reads the source in the target's canonical form, and the last
// row's key.
func (m *myReader) rowsCanon(ctx context.Context, t *table, after *Bound, limit int, dst Reader) ([][]*string, []any, error) {
	rows, err := m.query(ctx, t, after, nil, limit)
	if err != nil {
		return nil, nil, err
	}
	return scanRaw(rows, t, dst.FromSource)
}
