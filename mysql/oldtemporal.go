package mysql

import (
	"context"
	"fmt"

	"github.com/prepl/prepl/txn"
)

// errUndecoded: rows left for the target's definitions (Redecode) reached
// a renderer without them.
func errUndecoded(table string) error {
	return fmt.Errorf("the rows of %s have TIME, DATETIME or TIMESTAMP values in MariaDB's pre-10.1 format, which only the "+
		"target's column definitions can decode (with --dry-run --print-sql, give --target): %w", table, ErrUnsupported)
}

// Redecode decodes again, with the fractional digits of the target's
// columns, the rows events of t that carry MariaDB's pre-10.1 temporal
// format (txn.RowsEvent.Redecode): the binlog does not say them, and
// MariaDB's replica takes its own columns'. An event whose columns all
// have none keeps the reader's decoding.
func (c *Catalog) Redecode(ctx context.Context, t *txn.Txn) error {
	var out []txn.Change
	for i := 0; i < len(t.Changes); i++ {
		rc := t.Changes[i].Row
		if rc == nil || rc.Event == nil || rc.Event.Redecode == nil {
			if out != nil {
				out = append(out, t.Changes[i])
			}
			continue
		}
		ev := rc.Event
		end := i + 1 // the event's changes: t.Changes[i:end]
		for end < len(t.Changes) && t.Changes[end].Row != nil && t.Changes[end].Row.Event == ev {
			end++
		}
		fsp, need, err := c.oldTemporalFSP(ctx, rc.Table)
		if err != nil {
			return err
		}
		if !need && !ev.Undecoded {
			if out != nil {
				out = append(out, t.Changes[i:end]...)
			}
			i = end - 1
			continue
		}
		rcs, err := ev.Redecode(fsp)
		if err != nil {
			return err
		}
		if out == nil {
			out = append(make([]txn.Change, 0, len(t.Changes)+len(rcs)), t.Changes[:i]...)
		}
		for j := range rcs {
			out = append(out, txn.Change{Row: &rcs[j]})
		}
		i = end - 1
	}
	if out != nil {
		t.Changes = out
	}
	return nil
}

// oldTemporalFSP is the fractional digits of the target's column for
// each TIME, DATETIME or TIMESTAMP column of the old format in table map
// tb, and whether any has some.
func (c *Catalog) oldTemporalFSP(ctx context.Context, tb *txn.Table) ([]int, bool, error) {
	d, err := c.Load(ctx, tb.Schema, tb.Name)
	if err != nil {
		return nil, false, err
	}
	fsp := make([]int, len(tb.Types))
	need := false
	for i, typ := range tb.Types {
		if typ != txn.TypeTime && typ != txn.TypeDatetime && typ != txn.TypeTimestamp {
			continue
		}
		if i >= len(d.Columns) {
			return nil, false, fmt.Errorf("table %s column %d is a TIME, DATETIME or TIMESTAMP of MariaDB's pre-10.1 format, whose fractional "+
				"digits only the target's column can tell, and the target has no column %d: give the target table the source's columns: %w",
				d.QualifiedName(), i+1, i+1, ErrUnsupported)
		}
		col := &d.Columns[i]
		switch col.DataType {
		case "time", "datetime", "timestamp":
		default:
			return nil, false, fmt.Errorf("table %s column %s is a TIME, DATETIME or TIMESTAMP of MariaDB's pre-10.1 format, whose fractional "+
				"digits only the target's column can tell, and it is %s on the target: give the target column the source's type: %w",
				d.QualifiedName(), col.Name, col.DataType, ErrUnsupported)
		}
		fsp[i] = col.FSP
		need = need || col.FSP > 0
	}
	return fsp, need, nil
}
