package analyze

import (
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prepl/prepl/txn"
)

// hotKeys finds the rows transactions fight over: a row changed by a
// transaction within `window` transactions of the previous change to it is
// a conflict (both would be in flight together, so the later one waits in
// writeset mode, or is rolled back and retried in optimistic mode). The
// rows with the most conflicts are kept by Space-Saving, so memory is the
// keys of the last `window` transactions plus a fixed number of counters.
type hotKeys struct {
	window uint64
	last   map[string]uint64 // key -> seq of the last transaction that changed it
	fifo   []keySeq          // changes in seq order, to forget keys older than the window
	hh     *heavyHitters
	txnBuf []string
}

type keySeq struct {
	key string
	seq uint64
}

func newHotKeys(window int, capacity int) *hotKeys {
	return &hotKeys{window: uint64(max(window, 1)), last: map[string]uint64{}, hh: newHeavyHitters(capacity)}
}

// add records the row keys (named with rowKeyName) of transaction seq.
func (h *hotKeys) add(seq uint64, keys []string) {
	for len(h.fifo) > 0 && h.fifo[0].seq+h.window < seq {
		k := h.fifo[0]
		if h.last[k.key] == k.seq {
			delete(h.last, k.key)
		}
		h.fifo = h.fifo[1:]
	}
	if len(h.fifo) == 0 && cap(h.fifo) > 1024 {
		h.fifo = nil
	}
	for _, k := range keys {
		if prev, ok := h.last[k]; ok && prev+h.window >= seq {
			h.hh.add(k, 1)
		}
		h.last[k] = seq
		h.fifo = append(h.fifo, keySeq{k, seq})
	}
}

// rowKeys names, without duplicates, the rows tx changes in tables whose
// row key (primary key, else a NOT NULL unique key) the catalog knows.
func (h *hotKeys) rowKeys(tx *txn.Txn, cat txn.Catalog) []string {
	out := h.txnBuf[:0]
	var lastTable *txn.Table
	var def *txn.TableDef
	var ix *txn.IndexDef
	for _, ch := range tx.Changes {
		rc := ch.Row
		if rc == nil || rc.Table == nil {
			continue
		}
		if rc.Table != lastTable {
			lastTable, def, ix = rc.Table, nil, nil
			if d, ok := cat.Table(rc.Table.Schema, rc.Table.Name); ok && d != nil {
				def, ix = d, d.RowKey()
			}
		}
		if ix == nil {
			continue
		}
		for _, img := range [][]txn.Value{rc.Before, rc.After} {
			if img != nil {
				if k, ok := rowKeyName(def, ix, img); ok {
					out = append(out, k)
				}
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	h.txnBuf = out
	return out
}

// rowKeyName renders a row's key for people: `db.t (id=5)`.
func rowKeyName(def *txn.TableDef, ix *txn.IndexDef, img []txn.Value) (string, bool) {
	var b strings.Builder
	b.WriteString(def.Schema)
	b.WriteByte('.')
	b.WriteString(def.Name)
	b.WriteString(" (")
	for i, c := range ix.Columns {
		if c < 0 || c >= len(img) || c >= len(def.Columns) {
			return "", false
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(def.Columns[c].Name)
		b.WriteByte('=')
		writeValue(&b, img[c], &def.Columns[c])
	}
	b.WriteByte(')')
	return b.String(), true
}

func writeValue(b *strings.Builder, v txn.Value, col *txn.ColumnDef) {
	switch x := v.(type) {
	case nil:
		b.WriteString("NULL")
	case int64:
		if col.Unsigned && x < 0 {
			b.WriteString(strconv.FormatUint(unsignedValue(x, col.DataType), 10))
		} else {
			b.WriteString(strconv.FormatInt(x, 10))
		}
	case []byte:
		s := x
		cut := len(s) > 40
		if cut {
			s = s[:40]
		}
		if utf8.Valid(s) {
			b.WriteString(strconv.Quote(string(s)))
		} else {
			b.WriteString("0x")
			b.WriteString(hex.EncodeToString(s))
		}
		if cut {
			b.WriteString("…")
		}
	case txn.Decimal:
		b.WriteString(string(x))
	case txn.Temporal:
		b.WriteString(strconv.Quote(string(x)))
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case float32:
		b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
	case txn.Bit:
		b.WriteString("b'" + strconv.FormatUint(uint64(x), 2) + "'")
	case txn.Enum:
		b.WriteString("enum#" + strconv.FormatInt(int64(x), 10))
	case txn.Set:
		b.WriteString("set#" + strconv.FormatUint(uint64(x), 10))
	default:
		b.WriteString("?")
	}
}

func unsignedValue(v int64, dataType string) uint64 {
	switch dataType {
	case "tinyint":
		return uint64(uint8(v))
	case "smallint":
		return uint64(uint16(v))
	case "mediumint":
		return uint64(v) & 0xFFFFFF
	case "int", "integer":
		return uint64(uint32(v))
	}
	return uint64(v)
}
