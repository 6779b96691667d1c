package mysql

import (
	"context"
	"fmt"

	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/txn"
)

// netRows bounds the rows of one multi-row statement.
const netRows = 1000

// ApplyUnit buffers a commit unit's members inside the open transaction.
// With compaction the unit's net effect goes as a few multi-row statements
// per table (see package compact); a failed check on one of them returns
// an error wrapping ErrCompacted, and the caller rolls back and calls
// again with compaction off. It reports how many source row changes
// compaction saved.
func (c *Conn) ApplyUnit(ctx context.Context, txs []*txn.Txn, compaction bool) (saved int, err error) {
	if !compaction || len(txs) == 1 && txs[0].Rows() < 2 {
		return 0, c.applyAll(ctx, txs)
	}
	for _, tx := range txs {
		if tx.XA {
			return 0, c.Apply(ctx, tx) // the error that names it
		}
	}
	plan, ok, err := compact.Unit(txs, func(schema, name string) (*txn.TableDef, error) {
		return c.table(ctx, schema, name)
	})
	if err != nil {
		return 0, fmt.Errorf("apply %s: %w", describe(txs[0]), err)
	}
	if !ok {
		return 0, c.applyAll(ctx, txs)
	}
	if !c.open {
		return 0, fmt.Errorf("apply %s: no open transaction", describe(txs[0]))
	}
	for _, s := range plan.Ordered {
		if err := c.applyRow(ctx, s.Tx, s.Row); err != nil {
			return 0, err
		}
	}
	tx := txs[len(txs)-1]
	c.setFlags(0)
	for _, n := range plan.Nets {
		for _, st := range []struct {
			kind txn.Kind
			rows [][]txn.Value
			per  int64
		}{{txn.Delete, n.Deletes, 1}, {txn.Insert, n.Inserts, 1}, {txn.Update, n.Updates, 2}} {
			for len(st.rows) > 0 {
				k := min(len(st.rows), netRows)
				var b []byte
				if st.kind == txn.Delete {
					b, err = AppendNetDelete(c.buf, n, st.rows[:k])
				} else {
					b, err = AppendNetUpsert(c.buf, n, st.rows[:k], st.kind == txn.Update)
				}
				if err != nil {
					return 0, fmt.Errorf("apply %s: %w", describe(tx), err)
				}
				c.buf = append(b, ';')
				c.expect = append(c.expect, rowExpect{check: true, want: st.per * int64(k), kind: st.kind,
					table: n.Def.QualifiedName(), tx: tx, compacted: true})
				st.rows = st.rows[k:]
				if err := c.flushIfFull(ctx); err != nil {
					return 0, err
				}
			}
		}
	}
	return plan.Dropped, nil
}

func (c *Conn) applyAll(ctx context.Context, txs []*txn.Txn) error {
	for _, tx := range txs {
		if err := c.Apply(ctx, tx); err != nil {
			return err
		}
	}
	return nil
}

// AppendNetDelete appends one DELETE of rows by their row key.
func AppendNetDelete(b []byte, n *compact.Net, rows [][]txn.Value) ([]byte, error) {
	d, types := n.Def, n.Map.Types
	key := d.RowKey().Columns
	b = append(append(b, "DELETE FROM "...), tableName(d)...)
	b = append(b, " WHERE "...)
	var err error
	if len(key) == 1 {
		i := key[0]
		b = append(append(b, QuoteIdent(d.Columns[i].Name)...), " IN ("...)
		for r, row := range rows {
			if r > 0 {
				b = append(b, ',')
			}
			if b, err = AppendLiteral(b, row[i], types[i], &d.Columns[i]); err != nil {
				return b, err
			}
		}
		return append(b, ')'), nil
	}
	// A composite key: OR of conjunctions, which the range optimizer of
	// every MariaDB and MySQL version turns into key lookups.
	for r, row := range rows {
		if r > 0 {
			b = append(b, " OR "...)
		}
		b = append(b, '(')
		for j, i := range key {
			if j > 0 {
				b = append(b, " AND "...)
			}
			b = append(append(b, QuoteIdent(d.Columns[i].Name)...), '=')
			if b, err = AppendLiteral(b, row[i], types[i], &d.Columns[i]); err != nil {
				return b, err
			}
		}
		b = append(b, ')')
	}
	return b, nil
}

// AppendNetUpsert appends one multi-row INSERT of full images; overwrite
// makes it replace the existing rows (ON DUPLICATE KEY UPDATE every
// column), which the server reports as two affected rows each.
func AppendNetUpsert(b []byte, n *compact.Net, rows [][]txn.Value, overwrite bool) ([]byte, error) {
	d, types := n.Def, n.Map.Types
	b = append(append(append(b, "INSERT INTO "...), tableName(d)...), " ("...)
	b, _, _ = appendColumns(b, d, nil, ",", func(b []byte, i int) ([]byte, error) {
		return append(b, QuoteIdent(d.Columns[i].Name)...), nil
	})
	b = append(b, ") VALUES "...)
	var err error
	for r, row := range rows {
		if r > 0 {
			b = append(b, ',')
		}
		b = append(b, '(')
		if b, _, err = appendColumns(b, d, nil, ",", func(b []byte, i int) ([]byte, error) {
			return AppendLiteral(b, row[i], types[i], &d.Columns[i])
		}); err != nil {
			return b, err
		}
		b = append(b, ')')
	}
	if overwrite {
		b = append(b, " ON DUPLICATE KEY UPDATE "...)
		b, _, _ = appendColumns(b, d, nil, ",", func(b []byte, i int) ([]byte, error) {
			q := QuoteIdent(d.Columns[i].Name)
			return append(append(append(append(b, q...), "=VALUES("...), q...), ')'), nil
		})
	}
	return b, nil
}
