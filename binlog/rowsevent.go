package binlog

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// The rows events of a table of fastType columns (version 1 and 2, not
// compressed, without extra data) are decoded here, not by go-mysql's
// Parse: the guard has read and checked their post-header and bitmaps
// already (checkedRows), and Parse cost an event header, a BinlogEvent, a
// RowsEvent and, at the end of each statement, a new map of table maps,
// per event. What the assembler gets is the same (FuzzDecodeEvents
// compares the two); go-mysql's parser still decodes every other event,
// given the table maps it needs first (eventGuard.feed).

// decodeOwn turns decodeRows, and the skipping of repeated table maps, on;
// tests turn it off to compare with go-mysql's Parse of every event.
var decodeOwn = true

// checkedRows is what the guard read of a rows event before its rows.
type checkedRows struct {
	table   *tableMap
	tableID uint64
	flags   uint16
	extra   int    // version 2 extra data, its 2 length bytes included; 0 in version 1
	bitmaps []byte // the column bitmaps, both of an update
	rows    int    // where the rows start in the body
}

// rowsEvent is a rows event as the assembler reads it: decoded by
// decodeRows, or taken from go-mysql's (fromGoMySQL).
type rowsEvent struct {
	typ              replication.EventType
	tableID          uint64
	flags            uint16
	columns          uint64
	bitmap1, bitmap2 []byte
	rows             [][]any // the row images; an update's before and after alternate
	// normalized: the images are decodeRowsFast's, in the txn model
	// already, absent columns nil (what normalize would make of them).
	normalized bool
	// raw holds each image of rows as the event carries it (decodeRows
	// only; nil otherwise): txn.RowChange.BeforeImage and AfterImage.
	raw [][]byte
}

// Dump implements replication.Event.
func (e *rowsEvent) Dump(w io.Writer) {
	fmt.Fprintf(w, "%v: table id %d, flags %#x, %d columns, %d row images\n", e.typ, e.tableID, e.flags, e.columns, len(e.rows))
}

// Decode implements replication.Event; decodeRows decodes rows events.
func (e *rowsEvent) Decode([]byte) error {
	return errors.New("a rows event is decoded by the event guard")
}

func fromGoMySQL(e *replication.RowsEvent) rowsEvent {
	return rowsEvent{typ: rowsEventType(e), tableID: e.TableID, flags: e.Flags, columns: e.ColumnCount,
		bitmap1: e.ColumnBitmap1, bitmap2: e.ColumnBitmap2, rows: e.Rows}
}

func isRows(typ replication.EventType) bool {
	_, ok := rowsKind(typ)
	return ok
}

// rowsKind is the change a rows event of type typ makes.
func rowsKind(typ replication.EventType) (txn.Kind, bool) {
	switch typ {
	case replication.WRITE_ROWS_EVENTv0, replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2,
		replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1:
		return txn.Insert, true
	case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
		replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.PARTIAL_UPDATE_ROWS_EVENT:
		return txn.Update, true
	case replication.DELETE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2,
		replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return txn.Delete, true
	}
	return 0, false
}

// ownRows reports whether decodeRows decodes the rows event of type typ
// that the guard checked last: where the guard read its post-header as
// go-mysql does (which tells the version by the event type, the guard by
// the post-header length) and there is no extra data for go-mysql to
// decode, of a table of fastType columns.
func (g *eventGuard) ownRows(typ replication.EventType) bool {
	if !decodeOwn || !decodeFast {
		return false
	}
	h := &g.rows
	switch typ {
	case replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1:
		if h.extra != 0 {
			return false
		}
	case replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2:
		if h.extra != 2 {
			return false
		}
	default:
		return false
	}
	return h.table.fast
}

// decodeRows decodes the checked rows event raw, which ownRows accepts,
// into g.scratch: as go-mysql's Parse would with decodeRowsChecked.
func (g *eventGuard) decodeRows(raw []byte, typ replication.EventType) (*replication.BinlogEvent, error) {
	h := &g.rows
	update := isUpdateRows(typ)
	bm1, bm2 := h.bitmaps, []byte(nil)
	if update {
		n := len(h.bitmaps) / 2
		bm1, bm2 = h.bitmaps[:n], h.bitmaps[n:]
	}
	r := &g.scratch.rows
	images := r.raw[:0]
	if images == nil {
		images = make([][]byte, 0, 2)
	}
	rows, images, err := appendRows(r.rows[:0], images, h.table.ev, bm1, bm2, g.body(raw), h.rows, update, &g.slabs)
	if err != nil {
		return nil, fmt.Errorf("corrupted %v event: %s", typ, err)
	}
	*r = rowsEvent{typ: typ, tableID: h.tableID, flags: h.flags, columns: uint64(h.table.columns),
		bitmap1: bm1, bitmap2: bm2, rows: rows, normalized: true, raw: images}
	return g.scratchEvent(raw, r), nil
}
