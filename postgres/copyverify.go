package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/prepl/prepl/snapshot"
)

// VerifyReader reads a PostgreSQL target for snapshot.Verify: each value
// as its text, normalized (canon), and the source's values converted by
// the mapping (FromText) and normalized alike.
type VerifyReader struct {
	pool *pgxpool.Pool
	o    Options
}

var _ snapshot.Reader = (*VerifyReader)(nil)

// OpenVerifyReader connects to the target at url, in time zone UTC.
func OpenVerifyReader(ctx context.Context, url string, o Options) (*VerifyReader, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	pc.ConnConfig.RuntimeParams["TimeZone"] = "UTC"
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	return &VerifyReader{pool: pool, o: o}, nil
}

func (p *VerifyReader) Close() error { p.pool.Close(); return nil }

// unconvertible starts the text FromSource gives a value the mapping
// refuses.
const unconvertible = "unconvertible: "

// FromSource converts a source value by the mapping; a value the mapping
// refuses is text that matches no target value.
func (p *VerifyReader) FromSource(c *Column, raw []byte) *string {
	text, null, err := FromText(raw, c, p.o)
	if err != nil {
		s := unconvertible + err.Error()
		return &s
	}
	if null {
		return nil
	}
	return p.canon(c, []byte(text))
}

// Rows reads PostgreSQL's rows in the source's bytewise key order: text
// in the C collation.
func (p *VerifyReader) Rows(ctx context.Context, d *TableDef, after, upTo *snapshot.Bound) ([][]*string, error) {
	var sel, keys, pk []string
	if k := d.PrimaryKey(); k != nil {
		pk = k.Columns
	}
	for i := range d.Columns {
		sel = append(sel, Ident(d.Columns[i].Name, p.o)+"::text")
	}
	for _, k := range pk {
		key := Ident(k, p.o)
		if kind, _ := KindOf(d.Column(k)); kind == KindText || kind == KindEnum || kind == KindSet {
			key += ` COLLATE "C"`
		}
		keys = append(keys, key)
	}
	keyTuple := func(vals []string, args *[]any) string {
		var ps []string
		for i, v := range vals {
			*args = append(*args, v)
			c := d.Column(pk[i])
			typ, _, _ := Type(c, p.o)
			ps = append(ps, fmt.Sprintf("$%d::%s", len(*args), typ))
		}
		return "(" + strings.Join(ps, ",") + ")"
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + Table(d.Schema, d.Name, p.o)
	var where []string
	var args []any
	if after != nil {
		where = append(where, "("+strings.Join(keys, ",")+") > "+keyTuple(after.Text, &args))
	}
	if upTo != nil {
		where = append(where, "("+strings.Join(keys, ",")+") <= "+keyTuple(upTo.Text, &args))
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
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
				vals[i] = p.canon(&d.Columns[i], []byte(*v))
			}
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// canon normalizes a value's PostgreSQL text (input or output form): the
// two differ in float notation, trailing fractional zeros, the UTC
// offset, interval notation and JSON spacing and key order.
func (p *VerifyReader) canon(c *Column, raw []byte) *string {
	s := string(raw)
	k, _ := KindOf(c)
	switch k {
	case KindFloat, KindDouble:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			bits := 64
			if k == KindFloat {
				bits = 32
			}
			s = strconv.FormatFloat(f, 'g', -1, bits)
		}
	case KindDatetime, KindTimestamp:
		s = trimFraction(strings.TrimSuffix(s, "+00"))
	case KindTime:
		s = canonInterval(s)
	case KindJSON:
		var v any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		if d.Decode(&v) == nil {
			b, _ := json.Marshal(v)
			s = string(b)
		}
	}
	return &s
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

// Dialect: PostgreSQL's, for values in the canonical text of Rows (a
// type's own text form, which its input reads back), each cast to the
// column's mapped type. Generated columns are plain columns here,
// holding the source's values.
func (p *VerifyReader) Dialect() snapshot.Dialect {
	return snapshot.Dialect{
		Begin:  []string{"SET TIME ZONE 'UTC'", "BEGIN"},
		End:    []string{"COMMIT"},
		Table:  func(t *TableDef) string { return Table(t.Schema, t.Name, p.o) },
		Column: func(name string) string { return Ident(name, p.o) },
		Literal: func(c *Column, v *string) (string, error) {
			if v == nil {
				return "NULL", nil
			}
			if strings.HasPrefix(*v, unconvertible) {
				return "", fmt.Errorf("column %s: the source's value is %s", c.Name, *v)
			}
			typ, _, err := Type(c, p.o)
			if err != nil {
				return "", err
			}
			return QuoteString(*v) + "::" + typ, nil
		},
		Writable: func(*Column) bool { return true },
		Same:     func(col, lit string) string { return col + " IS NOT DISTINCT FROM " + lit },
		DeleteOne: func(table, where string) string {
			return "DELETE FROM " + table + " WHERE ctid = (SELECT ctid FROM " + table + " WHERE " + where + " LIMIT 1)"
		},
	}
}
