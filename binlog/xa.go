package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// DecodeEvents decodes row events a target stored for a prepared XA
// transaction (see mysql, xa.go): the source's format description
// event, then table map and rows events back to back, as BINLOG
// statements carry them. It returns a Txn holding their row changes, raw
// events kept, with Format set; it has no GTID or position of its own.
//
// The events are checked as a binlog file's are: they come from a table
// on the target, which anything may have changed.
func DecodeEvents(format, events []byte) (*txn.Txn, error) {
	g := newGuard(Limits{})
	a := newAssembler()
	if len(format) < replication.EventHeaderSize || replication.EventType(format[4]) != replication.FORMAT_DESCRIPTION_EVENT {
		return nil, errors.New("stored events: no format description event first")
	}
	ev, err := g.decode(format)
	if err != nil {
		return nil, fmt.Errorf("stored format description event: %w", err)
	}
	if _, err := a.add(ev); err != nil {
		return nil, err
	}
	for off := 0; off < len(events); {
		if len(events)-off < replication.EventHeaderSize {
			return nil, fmt.Errorf("stored events: %d bytes left at offset %d, less than an event header", len(events)-off, off)
		}
		n := int(binary.LittleEndian.Uint32(events[off+9:]))
		if n < replication.EventHeaderSize || n > len(events)-off {
			return nil, fmt.Errorf("stored events: event at offset %d says %d bytes, %d are left", off, n, len(events)-off)
		}
		raw := events[off : off+n]
		switch typ := replication.EventType(raw[4]); typ {
		case replication.TABLE_MAP_EVENT, replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1,
			replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2,
			replication.PARTIAL_UPDATE_ROWS_EVENT:
		default:
			return nil, fmt.Errorf("stored events: a %v event at offset %d, where only table map and rows events belong", typ, off)
		}
		ev, err := g.decode(raw)
		if err != nil {
			return nil, fmt.Errorf("stored events, offset %d: %w", off, err)
		}
		if _, err := a.add(ev); err != nil {
			return nil, fmt.Errorf("stored events, offset %d: %w", off, err)
		}
		off += n
	}
	if a.cur == nil {
		return &txn.Txn{Format: a.format, LastCommitted: -1, SequenceNumber: -1}, nil
	}
	return a.cur, nil
}
