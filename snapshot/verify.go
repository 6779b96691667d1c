package snapshot

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
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
	Source    mysql.Endpoint
	Target    string // mysql:// or postgres:// URL
	Databases []string
	ChunkRows int
	Opts      postgres.Options
	Max       int // stop after this many differences (0: 100)
}

// Verify compares every source table with the target, chunk by chunk of
// primary key: each side's chunk is hashed (values normalized by the type
// mapping), and only a chunk whose hashes differ is compared row by row.
// Both sides are read on the client: the hashes save the row-by-row
// comparison, not the reads. Tables without a primary key are one chunk,
// compared as sorted multisets of rows.
func Verify(ctx context.Context, cfg VerifyConfig) ([]Difference, error) {
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
	for _, q := range []string{"SET SESSION time_zone = '+00:00'", "SET NAMES utf8mb4"} {
		if _, err := sc.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	tables, err := listTables(ctx, sc, cfg.Databases)
	if err != nil {
		return nil, err
	}
	var side reader
	if strings.HasPrefix(cfg.Target, "postgres://") || strings.HasPrefix(cfg.Target, "postgresql://") {
		pc, err := pgxpool.ParseConfig(cfg.Target)
		if err != nil {
			return nil, err
		}
		pc.ConnConfig.RuntimeParams["TimeZone"] = "UTC"
		pool, err := pgxpool.NewWithConfig(ctx, pc)
		if err != nil {
			return nil, err
		}
		defer pool.Close()
		side = &pgReader{pool: pool, o: cfg.Opts}
	} else {
		e, err := mysql.ParseURL(cfg.Target)
		if err != nil {
			return nil, err
		}
		if e, err = e.WithDefaults(); err != nil {
			return nil, err
		}
		db, err := e.OpenDB()
		if err != nil {
			return nil, err
		}
		defer db.Close()
		c, err := db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("connect to target: %w", err)
		}
		defer c.Close()
		for _, q := range []string{"SET SESSION time_zone = '+00:00'", "SET NAMES utf8mb4"} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return nil, err
			}
		}
		side = &myReader{c: c}
	}
	var diffs []Difference
	for _, t := range tables {
		d, err := verifyTable(ctx, cfg, &myReader{c: sc}, side, t)
		if err != nil {
			return diffs, fmt.Errorf("verify %s.%s: %w", t.def.Schema, t.def.Name, err)
		}
		diffs = append(diffs, d...)
		if len(diffs) >= cfg.Max {
			return diffs[:cfg.Max], nil
		}
	}
	return diffs, nil
}

// reader reads a chunk of rows, canonical values by column (nil: NULL),
// with key > after (nil: from the start) and key <= upTo (nil: to the end).
type reader interface {
	rows(ctx context.Context, t *table, after, upTo []string, limit int) ([][]*string, error)
	canon(c *postgres.Column, raw []byte) (*string, error)
}

func verifyTable(ctx context.Context, cfg VerifyConfig, src *myReader, dst reader, t *table) ([]Difference, error) {
	name := t.def.Schema + "." + t.def.Name
	var diffs []Difference
	var after []string
	for {
		limit := cfg.ChunkRows
		if len(t.key) == 0 {
			limit = 0
		}
		s, err := src.rowsCanon(ctx, t, after, limit, dst)
		if err != nil {
			return nil, fmt.Errorf("source: %w", err)
		}
		var upTo []string
		end := len(t.key) == 0 || len(s) < cfg.ChunkRows
		if !end {
			upTo = keyValues(t, s[len(s)-1])
		}
		d, err := dst.rows(ctx, t, after, upTo, 0)
		if err != nil {
			return nil, fmt.Errorf("target: %w", err)
		}
		if hashRows(s) != hashRows(d) {
			diffs = append(diffs, diffRows(name, t, s, d)...)
		}
		if end {
			return diffs, nil
		}
		after = upTo
	}
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

// myReader reads a MySQL side through postgres.SourceExpr.
type myReader struct{ c *sql.Conn }

func (m *myReader) canon(c *postgres.Column, raw []byte) (*string, error) {
	s := string(raw)
	return &s, nil
}

func (m *myReader) query(ctx context.Context, t *table, after, upTo []string, limit int) (*sql.Rows, error) {
	var sel, keys []string
	for i := range t.def.Columns {
		sel = append(sel, postgres.SourceExpr(&t.def.Columns[i]))
	}
	for _, k := range t.key {
		keys = append(keys, quoteMy(k))
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + quoteMy(t.def.Schema) + "." + quoteMy(t.def.Name)
	var where []string
	var args []any
	marks := strings.TrimSuffix(strings.Repeat("?,", len(keys)), ",")
	if after != nil {
		where = append(where, "("+strings.Join(keys, ",")+") > ("+marks+")")
		for _, v := range after {
			args = append(args, v)
		}
	}
	if upTo != nil {
		where = append(where, "("+strings.Join(keys, ",")+") <= ("+marks+")")
		for _, v := range upTo {
			args = append(args, v)
		}
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

func scanRaw(rows *sql.Rows, n int, f func(i int, raw []byte) (*string, error)) ([][]*string, error) {
	defer rows.Close()
	vals := make([]sql.RawBytes, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]*string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]*string, n)
		for i, v := range vals {
			if v == nil {
				continue
			}
			s, err := f(i, v)
			if err != nil {
				return nil, err
			}
			row[i] = s
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func (m *myReader) rows(ctx context.Context, t *table, after, upTo []string, limit int) ([][]*string, error) {
	rows, err := m.query(ctx, t, after, upTo, limit)
	if err != nil {
		return nil, err
	}
	return scanRaw(rows, len(t.def.Columns), func(i int, raw []byte) (*string, error) { return m.canon(&t.def.Columns[i], raw) })
}

// rowsCanon reads the source in the target's canonical form.
func (m *myReader) rowsCanon(ctx context.Context, t *table, after []string, limit int, dst reader) ([][]*string, error) {
	rows, err := m.query(ctx, t, after, nil, limit)
	if err != nil {
		return nil, err
	}
	pg, isPG := dst.(*pgReader)
	return scanRaw(rows, len(t.def.Columns), func(i int, raw []byte) (*string, error) {
		c := &t.def.Columns[i]
		if !isPG {
			return m.canon(c, raw)
		}
		text, null, err := postgres.FromText(raw, c, pg.o)
		if err != nil {
			s := "unconvertible: " + err.Error()
			return &s, nil
		}
		if null {
			return nil, nil
		}
		return pg.canon(c, []byte(text))
	})
}

// pgReader reads a PostgreSQL side.
type pgReader struct {
	pool *pgxpool.Pool
	o    postgres.Options
}

func (p *pgReader) rows(ctx context.Context, t *table, after, upTo []string, limit int) ([][]*string, error) {
	var sel, keys []string
	for i := range t.def.Columns {
		sel = append(sel, postgres.Ident(t.def.Columns[i].Name, p.o)+"::text")
	}
	for _, k := range t.key {
		keys = append(keys, postgres.Ident(k, p.o))
	}
	keyTuple := func(vals []string, args *[]any) string {
		var ps []string
		for i, v := range vals {
			*args = append(*args, v)
			c := t.def.Column(t.key[i])
			typ, _, _ := postgres.Type(c, p.o)
			ps = append(ps, fmt.Sprintf("$%d::%s", len(*args), typ))
		}
		return "(" + strings.Join(ps, ",") + ")"
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + postgres.Table(t.def.Schema, t.def.Name, p.o)
	var where []string
	var args []any
	if after != nil {
		where = append(where, "("+strings.Join(keys, ",")+") > "+keyTuple(after, &args))
	}
	if upTo != nil {
		where = append(where, "("+strings.Join(keys, ",")+") <= "+keyTuple(upTo, &args))
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]*string
	for rows.Next() {
		vals := make([]*string, len(sel))
		ptrs := make([]any, len(sel))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if v != nil {
				if vals[i], err = p.canon(&t.def.Columns[i], []byte(*v)); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// canon normalizes a value's PostgreSQL text (input or output form): the
// two differ in float notation, trailing fractional zeros, the UTC
// offset, interval notation and JSON spacing and key order.
func (p *pgReader) canon(c *postgres.Column, raw []byte) (*string, error) {
	s := string(raw)
	k, _ := postgres.KindOf(c)
	switch k {
	case postgres.KindFloat, postgres.KindDouble:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			bits := 64
			if k == postgres.KindFloat {
				bits = 32
			}
			s = strconv.FormatFloat(f, 'g', -1, bits)
		}
	case postgres.KindDatetime, postgres.KindTimestamp:
		s = trimFraction(strings.TrimSuffix(s, "+00"))
	case postgres.KindTime:
		s = canonInterval(s)
	case postgres.KindJSON:
		var v any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		if d.Decode(&v) == nil {
			b, _ := json.Marshal(v)
			s = string(b)
		}
	}
	return &s, nil
}

func trimFraction(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// canonInterval writes [-]H:MM:SS[.f] with the fraction trimmed, from
// MySQL's TIME text or PostgreSQL's interval output ("-838:59:59",
// "1 day 02:00:00" does not occur: TIME maps to hours only).
func canonInterval(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if i := strings.Index(s, " day"); i >= 0 {
		return s // not produced by the mapping; compared as is
	}
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 {
		return s
	}
	h, _ := strconv.Atoi(parts[0])
	out := fmt.Sprintf("%d:%s:%s", h, parts[1], trimFraction(parts[2]))
	if neg && out != "0:00:00" {
		out = "-" + out
	}
	return out
}
