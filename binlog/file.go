package binlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/internal/readahead"
	"github.com/prepl/prepl/txn"
)

// FileOptions say where to start reading binlog files.
type FileOptions struct {
	// StartFile is the base name of the file to start in; earlier files
	// are skipped. "" starts with the first file.
	StartFile string
	// StartOffset is where to start in StartFile (the End offset of the
	// last transaction applied); 0 or 4 is the beginning.
	StartOffset uint32
	// Limits bound the size of an event and of a transaction.
	Limits Limits
	// ReadAheadBytes bounds the transactions parsed and not yet returned
	// by Next, by their size in memory (txn.Txn.Footprint); 0 means
	// DefaultReadAheadBytes. A bigger transaction is parsed alone.
	ReadAheadBytes int64
	// Skip, when set, says whether to leave out a transaction that cannot
	// be applied (a partial JSON update without its before image) instead
	// of stopping there: it is then returned with no changes.
	Skip func(gtid string, start txn.Position) bool
}

// FileReader reads transactions from binlog files on disk, in the order
// given. It decodes in a goroutine (internal/readahead), up to
// ReadAheadBytes of transactions ahead of Next, so memory stays bounded
// whatever the file and transaction sizes.
type FileReader struct {
	rd *readahead.Reader

	lim  Limits
	skip func(gtid string, start txn.Position) bool

	mu     sync.Mutex
	flavor txn.Flavor
}

// DefaultReadAheadBytes is FileOptions.ReadAheadBytes's default.
const DefaultReadAheadBytes = readahead.DefaultBytes

var errStopped = errors.New("binlog reader closed")

var errNotBinlog = errors.New("not a binlog file (no binlog magic number and format description event)")

// OpenFiles starts reading paths. Errors about the files themselves come
// from Next, after every transaction that precedes them.
func OpenFiles(paths []string, opt FileOptions) (*FileReader, error) {
	if len(paths) == 0 {
		return nil, errors.New("binlog: no files to read")
	}
	first := 0
	if opt.StartFile != "" {
		first = -1
		for i, p := range paths {
			if filepath.Base(p) == opt.StartFile {
				first = i
				break
			}
		}
		if first < 0 {
			return nil, fmt.Errorf("binlog: start file %s is not among the files given", opt.StartFile)
		}
	}
	if opt.ReadAheadBytes <= 0 {
		opt.ReadAheadBytes = DefaultReadAheadBytes
	}
	r := &FileReader{lim: opt.Limits.withDefaults(), skip: opt.Skip}
	paths = paths[first:]
	r.rd = readahead.Start(func(ctx context.Context, emit func(*txn.Txn) bool) error {
		return r.parseFiles(ctx, paths, opt.StartOffset, emit)
	}, opt.ReadAheadBytes, nil)
	return r, nil
}

// Flavor is the flavor of the server that wrote the files, known once the
// first event has been read ("" before).
func (r *FileReader) Flavor() txn.Flavor {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flavor
}

// Next returns the next complete transaction; io.EOF after the last one;
// a *FormatError when the files are damaged, incomplete or not row-based.
func (r *FileReader) Next(ctx context.Context) (*txn.Txn, error) { return r.rd.Next(ctx) }

// ReadAhead is the reader's read-ahead, for a consumer that takes its
// batches instead of calling Next (the apply engine).
func (r *FileReader) ReadAhead() *readahead.Reader { return r.rd }

// Close stops the decoding goroutine and waits for it.
func (r *FileReader) Close() error {
	r.rd.Close(errStopped)
	return nil
}

// newAssembler is an assembler with the reader's filter and limits.
func (r *FileReader) newAssembler() *assembler {
	asm := newAssembler()
	asm.skip, asm.maxEventSize = r.skip, r.lim.MaxEvent
	return asm
}

// parseFiles decodes paths, from offset in the first, and emits their
// transactions; nil at the end of the last file.
func (r *FileReader) parseFiles(ctx context.Context, paths []string, offset uint32, emit func(*txn.Txn) bool) error {
	asm := r.newAssembler()
	var g *eventGuard
	for i, path := range paths {
		start := uint32(4)
		if i == 0 && offset > 4 {
			start = offset
		}
		if !asm.carrying {
			g = newGuard(r.lim) // a relay log's transaction going on keeps the table maps go-mysql holds
		}
		err := r.parseFile(ctx, asm, g, path, start, emit)
		if errors.Is(err, errStopped) {
			return err
		}
		next := ""
		if i+1 < len(paths) {
			next = filepath.Base(paths[i+1])
		}
		if err = endOfFile(err, asm, next); err != nil {
			return err
		}
	}
	return nil
}

// errTruncated is wrapped when a file ends inside an event.
var errTruncated = errors.New("truncated event")

// endOfFile judges how a file ended: err from parseEvents; next is the
// next file's name, "" after the last. A transaction left open, or an
// event cut short, at the end of the last file is what a binlog still
// being written looks like (ErrIncomplete); anywhere else it is damage,
// but for a relay log's transaction that goes on in the next file.
func endOfFile(err error, asm *assembler, next string) error {
	last := next == ""
	var fe *FormatError
	truncated := errors.Is(err, errTruncated) && errors.As(err, &fe)
	if err != nil && !(truncated && last) {
		return err
	}
	if err == nil && asm.open() && asm.relay && !last {
		return asm.carryRelay(asm.lastEnd, next) // relay logs rotate inside transactions
	}
	if !asm.open() {
		if truncated { // cut inside an event between transactions
			return &FormatError{File: fe.File, Offset: fe.Offset, Err: fmt.Errorf("%w (%v)", ErrIncomplete, fe.Err)}
		}
		return nil
	}
	cause := errors.New("transaction has no commit before the end of the file")
	switch {
	case truncated:
		cause = fmt.Errorf("%w (%v: the file is cut short, or still being written)", ErrIncomplete, fe.Err)
	case last:
		cause = ErrIncomplete
	}
	return &FormatError{File: asm.file, Offset: asm.cur.Start.Offset, GTID: asm.cur.GTID, Err: cause}
}

// parseFile feeds one file's events to asm and sends its transactions.
func (r *FileReader) parseFile(ctx context.Context, asm *assembler, g *eventGuard, path string, start uint32, send func(*txn.Txn) bool) error {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return &FormatError{File: name, Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return &FormatError{File: name, Err: err}
	}
	return r.parseEvents(ctx, asm, g, name, f, st.Size(), start, send)
}

// parseEvents reads the binlog file rs of size bytes, called name, from
// offset start: the format description event first, wherever start is.
// Every event is checked by g before go-mysql decodes it; the first bad
// one ends the file with a *FormatError at its offset. A relay log is
// read with its source's events at their relay log offsets (relay.go).
func (r *FileReader) parseEvents(ctx context.Context, asm *assembler, g *eventGuard, name string, rs io.ReadSeeker, size int64, start uint32,
	send func(*txn.Txn) bool) error {
	carried := asm.carrying
	asm.setFile(name)
	er := &eventReader{r: bufio.NewReaderSize(rs, int(min(max(size, 4096), 1<<20))), size: size, max: g.lim.MaxEvent}
	fail := func(off int64, err error) error {
		fe := &FormatError{File: name, Offset: uint32(off), Err: err}
		if asm.open() {
			fe.GTID = asm.cur.GTID
		}
		return fe
	}
	magic := make([]byte, 4)
	if _, err := io.ReadFull(er.r, magic); err != nil || !bytes.Equal(magic, replication.BinLogFileHeader) {
		return fail(0, errNotBinlog)
	}
	er.off = 4
	raw, err := er.next()
	if err == io.EOF || err == nil && replication.EventType(raw[4]) != replication.FORMAT_DESCRIPTION_EVENT {
		return fail(4, fmt.Errorf("%w: no format description event at offset 4", errNotBinlog))
	}
	if err != nil {
		return fail(4, err)
	}
	// The server computes the format description's checksum without the
	// in-use flag it sets while the file is open.
	raw[17] &^= logEventBinlogInUse
	ev, err := g.decode(raw)
	if err != nil {
		return fail(4, err)
	}
	if _, err := asm.add(ev); err != nil {
		return err
	}
	r.noteFlavor(asm.flavor)
	// The event after the format description says whether this is a
	// relay log, which is read from its start whatever start is: the
	// source's format description comes after the replica's.
	fdeEnd := er.off
	next, nextErr := er.next()
	own := serverID(raw) // the first format description's: the replica's in a relay log
	relay := nextErr == nil && relayHead(next, own)
	switch {
	case relay:
		asm.startRelay(!carried)
		g.relay = true
	case nextErr == io.EOF:
		return nil
	case int64(start) > fdeEnd:
		if _, err := rs.Seek(int64(start), io.SeekStart); err != nil {
			return fail(int64(start), err)
		}
		er.r.Reset(rs)
		er.off = int64(start)
		next, nextErr = nil, nil
	case start != 4 && int64(start) != fdeEnd:
		return fail(int64(start), fmt.Errorf("start offset %d is inside the format description event", start))
	}
	for {
		if ctx.Err() != nil {
			return errStopped
		}
		var raw []byte
		var err error
		off := er.off
		if next != nil || nextErr != nil {
			off, raw, err, next, nextErr = fdeEnd, next, nextErr, nil, nil
		} else {
			raw, err = er.next()
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fail(off, err)
		}
		typ := replication.EventType(raw[4])
		toNext := false // in a relay log, the replica's rotate to the next relay file
		if relay {
			toNext = typ == replication.ROTATE_EVENT && serverID(raw) == own
			if off < int64(start) && typ != replication.FORMAT_DESCRIPTION_EVENT {
				continue // before --start-position: only the formats matter
			}
			if asm.relayHead && inTransaction(typ) {
				return fail(off, errRelayFragment) // before go-mysql misses its table map
			}
			if err := g.relocate(raw, off); err != nil {
				return fail(off, err)
			}
		} else if lp := binary.LittleEndian.Uint32(raw[13:]); lp != 0 && int64(lp) != off+int64(len(raw)) {
			if typ == replication.FORMAT_DESCRIPTION_EVENT {
				return fail(off, errRelayUnknown)
			}
			return fail(off, fmt.Errorf("corrupted %v event: its end position says %d, its length %d bytes from offset %d",
				typ, lp, len(raw), off))
		}
		ev, err := g.decode(raw)
		if err != nil {
			return fail(off, err)
		}
		t, err := asm.add(ev)
		if err != nil {
			return err
		}
		if e, ok := ev.Event.(*replication.RotateEvent); ok && toNext {
			asm.relayNext = string(e.NextLogName)
		}
		if g.countTxn(asm.open(), len(raw)+asm.takeInflated()) {
			asm.overLimit(g.lim.MaxTxn)
		}
		r.noteFlavor(asm.flavor)
		if t != nil && !send(t) {
			return errStopped
		}
	}
}

// eventReader reads whole events from a binlog file, checking each
// declared length against the limit and the file's size before it
// allocates the event.
type eventReader struct {
	r    *bufio.Reader
	off  int64 // file offset of the next event
	size int64 // of the file
	max  int64
	// scratch holds the last event of a type the guard decodes into its
	// scratchEvents.
	scratch []byte
	kept    keptEvents
}

// keptEvents hands out the memory of the events a transaction keeps:
// rows events several to an allocation of keptChunk bytes (an allocation
// each cost more than reading them). A chunk lives as long as the last
// transaction that holds an event of it. Every other event gets an
// allocation of its own: the guard and the assembler keep the last table
// map of each table id (up to 100,000 of them, table ids are not reused),
// and each would keep a whole chunk alive.
type keptEvents struct{ free []byte }

const keptChunk = 32 << 10

// alloc returns n bytes of their own for an event of type typ.
func (k *keptEvents) alloc(n int, typ replication.EventType) []byte {
	if n > keptChunk/8 || !isRows(typ) {
		return make([]byte, n)
	}
	if len(k.free) < n {
		k.free = make([]byte, keptChunk)
	}
	b := k.free[:n:n]
	k.free = k.free[n:]
	return b
}

// next returns the next event, header and checksum included; io.EOF at
// the end of the file between events.
func (er *eventReader) next() ([]byte, error) {
	hdr, err := er.r.Peek(replication.EventHeaderSize)
	if len(hdr) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the file ends %d bytes into an event header", errTruncated, len(hdr))
	}
	n := int64(binary.LittleEndian.Uint32(hdr[9:]))
	typ := replication.EventType(hdr[4])
	switch {
	case n < replication.EventHeaderSize:
		return nil, fmt.Errorf("corrupted %v event: length %d is shorter than the event header", typ, n)
	case n > er.max:
		return nil, fmt.Errorf("corrupted %v event: length %d is larger than --max-event-size %d (a damaged length, or raise --max-event-size)",
			typ, n, er.max)
	case er.off+n > er.size:
		return nil, fmt.Errorf("%w: %v event of %d bytes at offset %d runs past the end of the file (%d bytes)",
			errTruncated, typ, n, er.off, er.size)
	}
	var raw []byte
	if forgotten(typ) { // read and forgotten before the next event
		if int64(cap(er.scratch)) < n {
			er.scratch = make([]byte, n)
		}
		raw = er.scratch[:n]
	} else {
		raw = er.kept.alloc(int(n), typ) // table maps and rows events go into the transaction
	}
	if err := er.read(raw); err != nil {
		return nil, fmt.Errorf("%w: %v", errTruncated, err)
	}
	er.off += n
	return raw, nil
}

// read fills raw from the file: copied from the read buffer when it fits
// (io.ReadFull through bufio cost more than the copy, for every event).
func (er *eventReader) read(raw []byte) error {
	if len(raw) > er.r.Size() {
		_, err := io.ReadFull(er.r, raw)
		return err
	}
	p, err := er.r.Peek(len(raw))
	if err != nil {
		if err == io.EOF && len(p) > 0 {
			err = io.ErrUnexpectedEOF // as io.ReadFull says it
		}
		return err
	}
	copy(raw, p)
	_, err = er.r.Discard(len(raw))
	return err
}

func (r *FileReader) noteFlavor(f txn.Flavor) {
	if f == "" {
		return
	}
	r.mu.Lock()
	r.flavor = f
	r.mu.Unlock()
}

// logEventBinlogInUse is LOG_EVENT_BINLOG_IN_USE_F, set in the format
// description event's header while the server has the file open.
const logEventBinlogInUse = 0x1
