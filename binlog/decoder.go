package binlog

import (
	"sync"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// Decoder turns raw binlog events, in binlog order, into complete
// transactions: each event is checked by the event guard before it is
// decoded (by prepl or go-mysql), then given to the assembler. It is the
// one decoding state both readers drive: binlog/stream with Decode and
// Add for the events of a replication connection, binlog/fileset with
// DecodeFile and EndFile for the bytes of binlog files. It does no I/O
// and starts no goroutine.
//
// A Decoder is not safe for concurrent use, but for Flavor.
//
// Table-map state lives in four maps by table id, because it has four
// lifetimes: the guard's tables (the ids a rows event may name: until
// the end of a statement), maps (each id's last table map, checked and
// decoded once: until a format description; relay logs keep both across
// theirs) and parsed (what go-mysql's parser holds: until the parser is
// replaced), all three dropped with the guard at each file or connection
// (Restart); and the assembler's tables (each id's txn.Table, reused
// while its table map says the same: as long as the Decoder). One map
// would need a generation per lifetime in each entry, for no fewer
// lookups.
type Decoder struct {
	lim Limits      // with defaults
	g   *eventGuard // nil until the first event
	asm *assembler

	mu     sync.Mutex
	flavor txn.Flavor // as DecodeFile last noted it, for Flavor
}

// NewDecoder is a decoder within lim. skip, when set, says whether the
// user chose to leave out a transaction (by GTID or start position) that
// cannot be read whole or applied: it is then dropped as it is read, and
// returned with no changes, instead of refused.
func NewDecoder(lim Limits, skip func(gtid string, start txn.Position) bool) *Decoder {
	asm := newAssembler()
	asm.skip, asm.maxEventSize = skip, lim.MaxEvent
	return &Decoder{lim: lim.WithDefaults(), asm: asm} // the guard is made at its first use
}

// Decode checks the raw event (header, body and checksum) and decodes
// it. The event is valid until the next call when its type is Transient.
func (d *Decoder) Decode(raw []byte) (*replication.BinlogEvent, error) {
	if d.g == nil {
		d.g = newGuard(d.lim)
	}
	return d.g.decode(raw)
}

// Add assembles ev, an event of size bytes that Decode returned, and
// returns the transaction it completes, if any. A transaction that
// grows past Limits.MaxTxn is refused at its end (a *FormatError), or
// dropped when skip says so.
func (d *Decoder) Add(ev *replication.BinlogEvent, size int) (*txn.Txn, error) {
	t, err := d.asm.add(ev)
	if err != nil {
		return nil, err
	}
	if d.g.countTxn(d.asm.open(), size+d.asm.takeInflated()) {
		d.asm.overLimit(d.lim.MaxTxn)
	}
	return t, nil
}

// Restart forgets the events checked so far (the format description, the
// table maps) for a new sequence of them, such as a new replication
// connection; the transaction being read, if any, is kept (see Abandon).
func (d *Decoder) Restart() { d.g = newGuard(d.lim) }

// SetFlavor says which server writes the events, before the format
// description event does.
func (d *Decoder) SetFlavor(f txn.Flavor) { d.asm.flavor = f }

// Flavor is the flavor of the server that wrote the files DecodeFile
// read, known once their first event has been read ("" before). It may
// be called while another goroutine decodes.
func (d *Decoder) Flavor() txn.Flavor {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.flavor
}

// InTransaction reports whether a transaction has started and not yet
// ended.
func (d *Decoder) InTransaction() bool { return d.asm.open() }

// Position is the binlog file being read and the end of the last event
// read in it.
func (d *Decoder) Position() txn.Position {
	return txn.Position{File: d.asm.file, Offset: d.asm.lastEnd}
}

// SetPosition says where the next event starts, for a replication stream:
// where it (re)starts, or a heartbeat's position between transactions.
func (d *Decoder) SetPosition(p txn.Position) { d.asm.file, d.asm.lastEnd = p.File, p.Offset }

// Abandon forgets the transaction being read, for a replication stream
// read again from the end of the last transaction returned.
func (d *Decoder) Abandon() { d.asm.dropOpen() }

// Damage is the *FormatError of a damaged event at offset of file, in
// the transaction being read, if any.
func (d *Decoder) Damage(file string, offset uint32, err error) *FormatError {
	fe := &FormatError{File: file, Offset: offset, Err: err}
	if d.asm.open() {
		fe.GTID = d.asm.cur.GTID
	}
	return fe
}
