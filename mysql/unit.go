package mysql

import (
	"context"
	"fmt"
	"slices"

	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/txn"
)

// netRows bounds the rows of one multi-row statement.
const netRows = 1000

// renderNet writes a planned run: its ordered steps, then the net effect
// per compacted table as multi-row statements. A run with foreign keys
// goes with the checks off: its statements are not in source order, and
// its end state is one the source checked (package compact).
func (t *Target) renderNet(ctx context.Context, b *Batch, txs []*txn.Txn, plan *compact.Plan) error {
	b.noFK = plan.ForeignKeys
	defer func() { b.noFK = false }()
	for _, s := range plan.Ordered {
		if err := t.renderRow(ctx, b, s.Tx, s.Row); err != nil {
			return err
		}
	}
	tx := txs[len(txs)-1]
	b.setFlags(0)
	events := t.eventNets(txs, plan.Nets) // the nets whose inserts and updates go as rows events
	for _, n := range plan.Nets {
		asEvents := slices.Contains(events, n)
		for _, st := range []struct {
			kind txn.Kind
			rows [][]txn.Value
			per  int64
		}{{txn.Delete, n.Deletes, 1}, {txn.Insert, n.Inserts, 1}, {txn.Update, n.Updates, 2}} {
			if asEvents && st.kind != txn.Delete {
				continue
			}
			for len(st.rows) > 0 {
				k := min(len(st.rows), netRows)
				rows := st.rows[:k]
				b.setLax(st.kind != txn.Delete && writesComputed(n.Def) || slices.ContainsFunc(rows, writesEnumZero))
				e := rowExpect{check: true, want: st.per * int64(k), kind: st.kind, def: n.Def, tx: tx, compacted: true}
				err := b.add(e, func(buf []byte) ([]byte, error) {
					if st.kind == txn.Delete {
						return AppendNetDelete(buf, n, rows)
					}
					return AppendNetUpsert(buf, n, rows, st.kind == txn.Update)
				})
				if err != nil {
					return fmt.Errorf("apply %s: %w", describe(tx), err)
				}
				st.rows = st.rows[k:]
			}
		}
	}
	// After every delete: a compacted insert may take a key a delete
	// frees (package compact).
	if err := b.netEventsChunk(tx, events); err != nil {
		return err
	}
	b.saved += plan.Dropped
	return nil
}

func (t *Target) renderAll(ctx context.Context, b *Batch, txs []*txn.Txn) error {
	for _, tx := range txs {
		if err := t.renderTxn(ctx, b, tx); err != nil {
			return err
		}
	}
	return nil
}

// AppendNetDelete appends one DELETE of rows by their row key.
func AppendNetDelete(b []byte, n *compact.Net, rows [][]txn.Value) ([]byte, error) {
	d, types := n.Def, n.Map.Types
	key := d.RowKey().Columns
	b = appendTable(append(b, "DELETE FROM "...), d)
	b = append(b, " WHERE "...)
	var err error
	if len(key) == 1 {
		i := key[0]
		b = append(appendIdent(b, d.Columns[i].Name), " IN ("...)
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
			b = append(appendIdent(b, d.Columns[i].Name), '=')
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
	b = append(appendTable(append(b, "INSERT INTO "...), d), " ("...)
	b, _, _ = appendColumns(b, d, nil, ",", func(b []byte, i int) ([]byte, error) {
		return appendIdent(b, d.Columns[i].Name), nil
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
			name := d.Columns[i].Name
			return append(appendIdent(append(appendIdent(b, name), "=VALUES("...), name), ')'), nil
		})
	}
	return b, nil
}
