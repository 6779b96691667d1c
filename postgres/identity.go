package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/prepl/prepl/txn"
)

// Replicated rows carry their ids (the source's AUTO_INCREMENT values, or
// explicit ones), which do not move a PostgreSQL identity's sequence: an
// INSERT without an id on the target after the move would collide with
// them. Each commit therefore moves the sequence of every table it wrote
// to the largest id it wrote, when the sequence is behind, as
// AUTO_INCREMENT is on the source. It runs in the commit's round trip,
// and commits are in source order per position slot (a table is in one
// slot), so two units never race between reading the sequence and
// setting it; setval is not transactional, harmless for a maximum that
// only moves forward. The sequence of each table is looked up once
// (pg_get_serial_sequence costs more than the setval) and what prepl set
// last is remembered, so a unit whose ids are not past it adds nothing;
// a DDL forgets both (TRUNCATE restarts the sequence, a table may be
// dropped or renamed).

// identityMax is the largest value a unit writes into a table's identity
// (AUTO_INCREMENT) column.
type identityMax struct {
	table, column string // the table quoted, the column as PostgreSQL names it
	max           int64
}

// noteIdentity records the identity value of a row image w's table
// writes (an insert's, or an update's after image).
func (b *Batch) noteIdentity(w *rowWriter, name string, img []txn.Value, present []bool) {
	for i := range w.tb.src.Columns {
		c := &w.tb.src.Columns[i]
		if !Identity(c) {
			continue
		}
		if i >= len(img) || (present != nil && (i >= len(present) || !present[i])) {
			return
		}
		text, null := w.value(img, i)
		v, err := strconv.ParseInt(text, 10, 64)
		if null || err != nil {
			return
		}
		b.ids = noteMax(b.ids, identityMax{table: name, column: identName(c.Name, w.o), max: v})
		return
	}
}

// noteMax merges id into ids, one entry per table.
func noteMax(ids []identityMax, id identityMax) []identityMax {
	for j := range ids {
		if ids[j].table == id.table {
			ids[j].max = max(ids[j].max, id.max)
			return ids
		}
	}
	return append(ids, id)
}

// identitySeq is what prepl knows of a table's identity sequence.
type identitySeq struct {
	oid uint32 // 0: the table has no identity
	set int64  // the sequence is at least this far (prepl set it)
}

// identities caches each table's identity sequence, by quoted table name.
type identities struct {
	mu  sync.Mutex
	seq map[string]identitySeq
}

// forget drops everything known: after a DDL.
func (ids *identities) forget() {
	ids.mu.Lock()
	ids.seq = nil
	ids.mu.Unlock()
}

// identitySQL is the statement that moves the sequences of ids past
// their maxima, run on c inside its open transaction, or "" when none is
// behind what prepl set. Sequences not known yet are looked up on c.
func (t *Target) identitySQL(ctx context.Context, c *pgx.Conn, ids []identityMax) (string, error) {
	if len(ids) == 0 {
		return "", nil
	}
	t.ids.mu.Lock()
	defer t.ids.mu.Unlock()
	if t.ids.seq == nil {
		t.ids.seq = map[string]identitySeq{}
	}
	var q strings.Builder
	for _, id := range ids {
		s, ok := t.ids.seq[id.table]
		if !ok {
			var oid *uint32
			if err := c.QueryRow(ctx, "SELECT pg_get_serial_sequence($1, $2)::regclass::oid", id.table, id.column).Scan(&oid); err != nil {
				return "", fmt.Errorf("identity of %s: %w", id.table, err)
			}
			if oid != nil {
				s.oid = *oid
			}
			t.ids.seq[id.table] = s
		}
		if s.oid == 0 || id.max <= s.set {
			continue
		}
		if q.Len() == 0 {
			q.WriteString("SELECT setval(s, v) FROM (VALUES ")
		} else {
			q.WriteString(", ")
		}
		fmt.Fprintf(&q, "(%d::regclass, %d::bigint)", s.oid, id.max)
	}
	if q.Len() == 0 {
		return "", nil
	}
	q.WriteString(") AS ids(s, v) WHERE coalesce(pg_sequence_last_value(s), 0) < v")
	return q.String(), nil
}

// identitySet remembers that the sequences of ids are past their maxima
// (the transaction that set them committed).
func (t *Target) identitySet(ids []identityMax) {
	t.ids.mu.Lock()
	defer t.ids.mu.Unlock()
	for _, id := range ids {
		if s, ok := t.ids.seq[id.table]; ok && s.oid != 0 {
			s.set = max(s.set, id.max)
			t.ids.seq[id.table] = s
		}
	}
}
