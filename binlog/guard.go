package binlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/klauspost/compress/zstd"
)

// Limits bound what one event and one transaction may hold, so that a
// damaged length cannot make prepl allocate without end.
type Limits struct {
	// MaxEvent is the largest event accepted, in bytes; 0 means
	// DefaultMaxEventSize.
	MaxEvent int64
	// MaxTxn is the largest transaction accepted (the sum of its events),
	// in bytes; 0 means DefaultMaxTxnSize. prepl holds a transaction whole
	// in memory until it is applied.
	MaxTxn int64
}

// DefaultMaxEventSize is the largest event a server can send or write:
// max_allowed_packet's maximum, 1 GiB, in MariaDB and MySQL alike.
const DefaultMaxEventSize = 1 << 30

// DefaultMaxTxnSize is the largest transaction read by default. Servers
// allow bigger ones (max_binlog_cache_size is unlimited by default), but
// prepl holds a transaction whole, decoded, in memory.
const DefaultMaxTxnSize = 4 << 30

// WithDefaults is l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxEvent <= 0 {
		l.MaxEvent = DefaultMaxEventSize
	}
	if l.MaxTxn <= 0 {
		l.MaxTxn = DefaultMaxTxnSize
	}
	return l
}

// maxColumns is the most columns a MariaDB or MySQL table can have.
const maxColumns = 4096

// eventGuard checks each raw event before go-mysql decodes it. go-mysql
// trusts the lengths and counts inside an event: a rows event whose column
// count is 0 makes it append empty rows without end (gigabytes in seconds,
// then a fatal out-of-memory that no recover catches), a GTID list count
// allocates up to 4 GiB, a short format description makes it index out of
// range. So whatever go-mysql would trust is checked here first: the
// event's length, its checksum, the format description, and the table
// map and rows event structure (column counts, bitmap sizes).
//
// Invariant: tables holds the table map of every table id seen since
// the last rows event that ended a statement: the tables a rows event may
// name. go-mysql's parser holds what parsed says.
type eventGuard struct {
	lim Limits
	p   *replication.BinlogParser // decodes what prepl does not decode itself

	fde      bool   // a format description has been seen
	fdeRaw   []byte // the last one, to start a new parser with
	crc      bool   // events end with a CRC32
	relay    bool   // reading relay logs: table maps outlive format descriptions
	postHdr  []byte // post-header length of each event type (type-1)
	tables   map[uint64]*tableMap
	txnBytes int64 // bytes of the open transaction's events so far

	scratch scratchEvents

	// maps are the table map events decoded, by table id: a table map
	// the same as the last one of its table (every statement repeats it)
	// is checked and decoded once. hit is the event being decoded, when
	// it is such a repeat.
	maps map[uint64]*tableMap
	hit  *tableMap

	// rows is the post-header of the rows event checked last.
	rows checkedRows
	// slabs hold the values decodeRows decodes.
	slabs valueSlabs

	// parsed mirrors the table maps go-mysql's parser holds, by table id:
	// the one it decodes that table's rows events with, nil where that is
	// not the table's last table map (which a repeat skipped). go-mysql
	// drops them all at the end of a statement it decodes; decodeRows
	// does not, so the parser is replaced when it holds maxParsed.
	parsed map[uint64]*tableMap
}

// maxParsed bounds the table maps go-mysql's parser holds (table ids are
// not reused: a long stream names ever new ones).
const maxParsed = 1024

type tableMap struct {
	raw     []byte // the event, as first read
	body    []byte // raw without header and checksum
	columns int
	ev      *replication.TableMapEvent // decoded whole
	fast    bool                       // decodeRows decodes its rows events
}

// skipOptionalMeta is go-mysql's optional metadata decoding for a table
// map the guard has decoded before (the rows decoding needs none of it).
func skipOptionalMeta([]byte) error { return nil }

// scratchEvents are reused for the events every transaction has and the
// assembler only reads (MariaDB's GTID event, the XID event, repeated
// table maps and the rows events prepl decodes): through go-mysql's Parse
// each cost three to five allocations. An event decoded into them is
// valid until the next decode.
type scratchEvents struct {
	ev   replication.BinlogEvent
	h    replication.EventHeader
	gtid replication.MariadbGTIDEvent
	xid  replication.XIDEvent
	text replication.GenericEvent // a statement's text, which prepl does not use
	rows rowsEvent
}

// Transient reports whether events of type typ are decoded into
// scratchEvents: neither they nor their raw bytes outlive the assembler's
// reading them. The text of each row statement (MariaDB's annotate-rows
// events, MySQL's rows-query events: four of the fourteen events of a
// sysbench oltp transaction) is checked and not decoded at all.
func Transient(typ replication.EventType) bool {
	switch typ {
	case replication.MARIADB_GTID_EVENT, replication.XID_EVENT,
		replication.MARIADB_ANNOTATE_ROWS_EVENT, replication.ROWS_QUERY_EVENT:
		return true
	}
	return false
}

func newGuard(lim Limits) *eventGuard {
	return &eventGuard{lim: lim.WithDefaults(), p: newParser(), tables: map[uint64]*tableMap{},
		maps: map[uint64]*tableMap{}, parsed: map[uint64]*tableMap{},
		slabs: newValueSlabs(256, 64)}
}

// newParser is a go-mysql parser configured as the txn model needs
// (values as documented in values.go), with checked rows decoding.
func newParser() *replication.BinlogParser {
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(false) // the guard verifies, before decoding
	p.SetParseTime(false)
	p.SetTimestampStringLocation(time.UTC)
	p.SetUseDecimal(false)
	p.SetRenderJSONAsMySQLText(true)
	p.SetRowsEventDecodeFunc(decodeRowsChecked)
	return p
}

// decode checks raw and decodes it: the rows events of tables of common
// column types and repeated table maps by prepl, the others with
// go-mysql's parser. A panic in go-mysql becomes an error: nothing in a
// binlog may end prepl with a Go panic.
func (g *eventGuard) decode(raw []byte) (ev *replication.BinlogEvent, err error) {
	if err := g.check(raw); err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			g.p.SetTableMapOptionalMetaDecodeFunc(nil)
			ev, err = nil, fmt.Errorf("corrupted %v event: decoding it failed: %v", replication.EventType(raw[4]), v)
		}
	}()
	// In a function of its own: its returns would make decode's defer
	// a costly one.
	return g.decodeChecked(raw)
}

// decodeChecked decodes raw, which check accepted.
func (g *eventGuard) decodeChecked(raw []byte) (*replication.BinlogEvent, error) {
	typ := replication.EventType(raw[4])
	if Transient(typ) {
		return g.decodeScratch(raw, typ)
	}
	hit := g.hit
	g.hit = nil
	switch {
	case hit != nil && decodeOwn:
		// go-mysql's parser is given it when a rows event needs it.
		if _, ok := g.parsed[hit.ev.TableID]; ok {
			g.parsed[hit.ev.TableID] = nil
		}
		return g.scratchEvent(raw, hit.ev), nil
	case g.ownRows(typ):
		return g.decodeRows(raw, typ)
	case isRows(typ):
		if err := g.feed(g.rows.tableID, g.rows.table); err != nil {
			return nil, err
		}
	case typ == replication.TABLE_MAP_EVENT:
		if err := g.makeRoom(); err != nil {
			return nil, err
		}
	}
	var ev *replication.BinlogEvent
	var err error
	if hit != nil {
		// go-mysql still registers the table for the rows events that
		// follow; the assembler gets the event decoded before.
		ev, err = g.parseRepeat(raw)
	} else {
		ev, err = g.parse(raw)
	}
	if err != nil {
		var ee *replication.EventError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("corrupted %v event: %s", ee.Header.EventType, goMySQLCause(ee.Err))
		}
		return nil, fmt.Errorf("corrupted %v event: %s", typ, goMySQLCause(err.Error()))
	}
	g.parsedEvent(ev, hit)
	return ev, nil
}

// goMySQLCause is err's text up to the dump go-mysql appends when it
// recovers a panic of its rows decoding ("parse rows event panic <cause>,
// data <the event's bytes>, parsed rows <%#v>, table map <%#v>"):
// kilobytes of Go syntax and pointer addresses, which say nothing to a
// DBA that the file and offset of the error do not.
func goMySQLCause(s string) string {
	if strings.HasPrefix(s, "parse rows event panic ") {
		if i := strings.Index(s, ", data \""); i > 0 {
			return s[:i]
		}
	}
	return s
}

// parseRepeat decodes a table map event the same as one decoded before
// with go-mysql's parser, without its optional metadata.
func (g *eventGuard) parseRepeat(raw []byte) (*replication.BinlogEvent, error) {
	g.p.SetTableMapOptionalMetaDecodeFunc(skipOptionalMeta)
	ev, err := g.parse(raw) // on a panic, decode resets the func
	g.p.SetTableMapOptionalMetaDecodeFunc(nil)
	return ev, err
}

// parse decodes raw with go-mysql's parser; a table map's compressed
// columns are given their plain types (plainCompressed), in the event
// the parser keeps for the rows events that follow.
func (g *eventGuard) parse(raw []byte) (*replication.BinlogEvent, error) {
	ev, err := g.p.Parse(raw)
	if err != nil {
		return nil, err
	}
	if e, ok := ev.Event.(*replication.TableMapEvent); ok {
		if err := plainCompressed(e, raw); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// parsedEvent notes what go-mysql's parser decoded: the table maps it
// holds, and the table map decoded for the first time.
func (g *eventGuard) parsedEvent(ev *replication.BinlogEvent, hit *tableMap) {
	switch e := ev.Event.(type) {
	case *replication.FormatDescriptionEvent:
		g.fdeRaw = bytes.Clone(ev.RawData)
	case *replication.TableMapEvent:
		m := g.tables[e.TableID]
		if hit != nil {
			ev.Event = hit.ev
		} else if m != nil && m.ev == nil {
			m.ev, m.fast = e, fastTable(e)
		}
		g.parsed[e.TableID] = m
	case *replication.RowsEvent:
		if e.Flags&replication.RowsEventStmtEndFlag != 0 {
			clear(g.parsed) // as go-mysql's parser does
		}
	}
}

// feed gives go-mysql's parser the table map m of table id, the last
// one, before a rows event of that table it decodes: the table map it
// would hold had it decoded every event. A repeated table map is decoded
// without its optional metadata, as decode does when decodeOwn is off.
func (g *eventGuard) feed(id uint64, m *tableMap) error {
	if m.ev == nil || g.parsed[id] == m {
		return nil
	}
	if err := g.makeRoom(); err != nil {
		return err
	}
	if _, err := g.parseRepeat(m.raw); err != nil {
		return fmt.Errorf("corrupted %v event: its table map (table id %d) decodes no more: %v", replication.TABLE_MAP_EVENT, id, err)
	}
	g.parsed[id] = m
	return nil
}

// makeRoom replaces go-mysql's parser with a new one, given the format
// description in force, when it holds maxParsed table maps: called
// before it decodes one more.
func (g *eventGuard) makeRoom() error {
	if len(g.parsed) < maxParsed {
		return nil
	}
	p := newParser()
	if _, err := p.Parse(g.fdeRaw); err != nil {
		return fmt.Errorf("corrupted %v event: %v", replication.FORMAT_DESCRIPTION_EVENT, err)
	}
	g.p = p
	clear(g.parsed)
	return nil
}

// body is raw without its header and checksum.
func (g *eventGuard) body(raw []byte) []byte {
	body := raw[replication.EventHeaderSize:]
	if g.crc {
		body = body[:len(body)-replication.BinlogChecksumLength]
	}
	return body
}

// scratchEvent is raw, whose decoded form is e, in g.scratch.
func (g *eventGuard) scratchEvent(raw []byte, e replication.Event) *replication.BinlogEvent {
	s := &g.scratch
	s.h = replication.EventHeader{}
	_ = s.h.Decode(raw) // cannot fail: check saw at least a header of a length at least 19
	s.ev = replication.BinlogEvent{RawData: raw, Header: &s.h, Event: e}
	return &s.ev
}

// decodeScratch decodes a checked event of a Transient type into
// g.scratch, as go-mysql's Parse would.
func (g *eventGuard) decodeScratch(raw []byte, typ replication.EventType) (*replication.BinlogEvent, error) {
	s := &g.scratch
	body := g.body(raw)
	var e replication.Event
	switch typ {
	case replication.MARIADB_GTID_EVENT:
		s.gtid = replication.MariadbGTIDEvent{}
		s.gtid.GTID.ServerID = binary.LittleEndian.Uint32(raw[5:])
		e = &s.gtid
	case replication.MARIADB_ANNOTATE_ROWS_EVENT, replication.ROWS_QUERY_EVENT:
		return g.scratchEvent(raw, &s.text), nil
	default:
		s.xid = replication.XIDEvent{}
		e = &s.xid
	}
	if err := e.Decode(body); err != nil {
		return nil, fmt.Errorf("corrupted %v event: %v", typ, err)
	}
	return g.scratchEvent(raw, e), nil
}

// damaged is the error of a structurally impossible event.
func damaged(typ replication.EventType, format string, args ...any) error {
	return fmt.Errorf("corrupted %v event: %s", typ, fmt.Sprintf(format, args...))
}

// check validates one raw event (header included, checksum included).
func (g *eventGuard) check(raw []byte) error {
	if len(raw) < replication.EventHeaderSize {
		return fmt.Errorf("truncated event: %d bytes, less than the 19-byte event header", len(raw))
	}
	typ := replication.EventType(raw[4])
	size := binary.LittleEndian.Uint32(raw[9:])
	if int64(size) != int64(len(raw)) {
		return damaged(typ, "event length says %d bytes, the event has %d", size, len(raw))
	}
	if int64(size) > g.lim.MaxEvent {
		return fmt.Errorf("event of %d bytes is larger than --max-event-size %d: a damaged length, or raise --max-event-size", size, g.lim.MaxEvent)
	}
	if typ == replication.FORMAT_DESCRIPTION_EVENT {
		return g.checkFDE(raw)
	}
	if !g.fde {
		switch typ {
		case replication.ROTATE_EVENT, replication.HEARTBEAT_EVENT, replication.HEARTBEAT_LOG_EVENT_V2:
			// The server sends these before the format description.
			return nil
		}
		return damaged(typ, "no format description event before it: not a binlog, or its start is missing")
	}
	flags := binary.LittleEndian.Uint16(raw[17:])
	known := int(typ) <= len(g.postHdr) || flags&replication.LOG_EVENT_IGNORABLE_F != 0 ||
		typ == replication.HEARTBEAT_EVENT || typ == replication.HEARTBEAT_LOG_EVENT_V2
	if typ == replication.UNKNOWN_EVENT || !known {
		// go-mysql would pass it on as a generic event and the
		// assembler ignore it: rows could vanish without a word.
		return damaged(typ, "event type %d is unknown to the server that wrote the binlog", typ)
	}
	body := raw[replication.EventHeaderSize:]
	if g.crc {
		if len(body) < replication.BinlogChecksumLength {
			return damaged(typ, "%d bytes, too short for its checksum", len(raw))
		}
		want := binary.LittleEndian.Uint32(raw[len(raw)-4:])
		if crc32.ChecksumIEEE(raw[:len(raw)-4]) != want {
			return damaged(typ, "checksum mismatch")
		}
		body = body[:len(body)-replication.BinlogChecksumLength]
	}
	switch typ {
	case replication.TABLE_MAP_EVENT:
		return g.checkTableMap(typ, raw, body)
	case replication.WRITE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv0,
		replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1,
		replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2,
		replication.PARTIAL_UPDATE_ROWS_EVENT,
		replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1,
		replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return g.checkRows(typ, body)
	case replication.MARIADB_GTID_LIST_EVENT:
		if len(body) < 4 {
			return damaged(typ, "too short")
		}
		if n := int(binary.LittleEndian.Uint32(body) & (1<<28 - 1)); n > (len(body)-4)/16 {
			return damaged(typ, "says %d GTIDs, its %d bytes hold at most %d", n, len(body), (len(body)-4)/16)
		}
	case replication.MARIADB_QUERY_COMPRESSED_EVENT:
		return g.checkCompressedQuery(typ, body)
	case replication.TRANSACTION_PAYLOAD_EVENT:
		return g.checkPayload(typ, body)
	case replication.GTID_TAGGED_LOG_EVENT:
		// mysql::serialization: at most 16 fixed and varlen fields and a
		// tag of at most 32 characters; go-mysql slices within the body.
		if len(body) < 18 || len(body) > 512 {
			return damaged(typ, "%d bytes (a tagged GTID event has 18 to 512)", len(body))
		}
	}
	return nil
}

// checkFDE validates a format description and takes the checksum
// algorithm and post-header lengths from it.
func (g *eventGuard) checkFDE(raw []byte) (err error) {
	typ := replication.FORMAT_DESCRIPTION_EVENT
	body := raw[replication.EventHeaderSize:]
	// binlog version (2), server version (50), timestamp (4), header length (1)
	const fixed = 2 + 50 + 4 + 1
	if len(body) < fixed+int(replication.TABLE_MAP_EVENT) {
		return damaged(typ, "%d bytes, too short", len(raw))
	}
	if v := binary.LittleEndian.Uint16(body); v != 4 {
		return damaged(typ, "binlog version %d, want 4", v)
	}
	if body[fixed-1] != replication.EventHeaderSize {
		return damaged(typ, "event header length %d, want 19", body[fixed-1])
	}
	var fde replication.FormatDescriptionEvent
	if err := fde.Decode(body); err != nil {
		return damaged(typ, "%v", err)
	}
	switch fde.ChecksumAlgorithm {
	case replication.BINLOG_CHECKSUM_ALG_OFF, replication.BINLOG_CHECKSUM_ALG_CRC32:
	case replication.BINLOG_CHECKSUM_ALG_UNDEF:
		if checksumEra(fde.ServerVersion) {
			return damaged(typ, "checksum algorithm byte 255 from server %q, which writes 0 (none) or 1 (CRC32)", fde.ServerVersion)
		}
	default:
		return damaged(typ, "unknown checksum algorithm %d (want 0, none, or 1, CRC32)", fde.ChecksumAlgorithm)
	}
	g.crc = fde.ChecksumAlgorithm == replication.BINLOG_CHECKSUM_ALG_CRC32
	if g.crc {
		if crc32.ChecksumIEEE(raw[:len(raw)-4]) != binary.LittleEndian.Uint32(raw[len(raw)-4:]) {
			return damaged(typ, "checksum mismatch")
		}
	}
	if len(fde.EventTypeHeaderLengths) < int(replication.TABLE_MAP_EVENT) {
		return damaged(typ, "post-header lengths for %d event types, fewer than a binlog needs", len(fde.EventTypeHeaderLengths))
	}
	g.fde = true
	g.postHdr = bytes.Clone(fde.EventTypeHeaderLengths)
	if !g.relay { // a relay log's statement goes on past the formats of the next file (relay.go)
		clear(g.tables)
		clear(g.maps)
	}
	return nil
}

// checksumEra reports whether a server of this version writes a checksum
// algorithm byte in its format description (MySQL 5.6.1+, MariaDB 5.3+).
func checksumEra(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > 5 || major == 5 && minor >= 6 ||
		strings.Contains(strings.ToLower(version), "mariadb") && major == 5 && minor >= 3
}

// tableIDSize is the size of the table id in a table map or rows event
// of type typ, from the post-header lengths of the format description.
func (g *eventGuard) tableIDSize(typ replication.EventType) (int, int, error) {
	i := int(typ) - 1
	if i < 0 || i >= len(g.postHdr) {
		return 0, 0, damaged(typ, "event type %d is not in the format description", typ)
	}
	ph := int(g.postHdr[i])
	switch ph {
	case 6:
		return 4, ph, nil
	case 8, 10:
		return 6, ph, nil
	}
	return 0, 0, damaged(typ, "post-header length %d in the format description (want 6, 8 or 10)", ph)
}

// lenenc reads a length-encoded integer, failing where go-mysql would
// read past the end.
func lenenc(b []byte) (uint64, int, bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	if lenencSize(b[0]) > len(b) {
		return 0, 0, false
	}
	v, _, n := mysql.LengthEncodedInt(b)
	return v, n, true
}

// lenencSize is the size of a length-encoded integer that starts with b.
func lenencSize(b byte) int {
	switch b {
	case 0xfc:
		return 3
	case 0xfd:
		return 4
	case 0xfe:
		return 9
	}
	return 1
}

func (g *eventGuard) checkTableMap(typ replication.EventType, raw, body []byte) error {
	idSize, _, err := g.tableIDSize(typ)
	if err != nil {
		return err
	}
	pos := idSize + 2
	if len(body) < pos+2 {
		return damaged(typ, "too short")
	}
	id := fixedInt(body[:idSize])
	if m := g.maps[id]; m != nil && m.ev != nil && bytes.Equal(m.body, body) {
		g.tables[id], g.hit = m, m
		return nil
	}
	for range 2 { // schema, then table: length, name, NUL
		if pos >= len(body) {
			return damaged(typ, "schema or table name runs past the event's end")
		}
		n := int(body[pos])
		pos += 1 + n + 1
		if pos > len(body) {
			return damaged(typ, "schema or table name runs past the event's end")
		}
	}
	count, n, ok := lenenc(body[pos:])
	if !ok {
		return damaged(typ, "column count runs past the event's end")
	}
	pos += n
	if count == 0 || count > maxColumns {
		return damaged(typ, "column count %d (want 1 to %d)", count, maxColumns)
	}
	if int(count) > len(body)-pos {
		return damaged(typ, "%d column types, only %d bytes left", count, len(body)-pos)
	}
	pos += int(count)
	metaLen, n, ok := lenenc(body[pos:])
	if !ok || metaLen > uint64(len(body)-pos-n) {
		return damaged(typ, "column metadata runs past the event's end")
	}
	pos += n + int(metaLen)
	nullBytes := (int(count) + 7) / 8
	if len(body)-pos < nullBytes {
		return damaged(typ, "null bitmap of %d bytes runs past the event's end", nullBytes)
	}
	pos += nullBytes
	if err := checkOptionalMeta(typ, body[pos:]); err != nil {
		return err
	}
	if len(g.maps) > 100000 { // table ids are not reused; keep the map bounded
		clear(g.maps)
	}
	m := &tableMap{raw: raw, body: body, columns: int(count)}
	g.tables[id], g.maps[id] = m, m
	return nil
}

// checkOptionalMeta walks the table map's optional metadata (type, length,
// value) and the ENUM/SET value lists, whose counts go-mysql allocates.
func checkOptionalMeta(typ replication.EventType, b []byte) error {
	for len(b) > 0 {
		t := b[0]
		l, n, ok := lenenc(b[1:])
		if !ok || l > uint64(len(b)-1-n) {
			return damaged(typ, "optional metadata field %d runs past the event's end", t)
		}
		v := b[1+n : 1+n+int(l)]
		b = b[1+n+int(l):]
		if t != replication.TABLE_MAP_OPT_META_SET_STR_VALUE && t != replication.TABLE_MAP_OPT_META_ENUM_STR_VALUE {
			continue
		}
		for len(v) > 0 {
			vals, n, ok := lenenc(v)
			if !ok || vals > uint64(len(v)-n) { // each value takes a byte at least
				return damaged(typ, "ENUM/SET value list runs past the event's end")
			}
			v = v[n:]
			for range vals {
				l, n, ok := lenenc(v)
				if !ok || l > uint64(len(v)-n) {
					return damaged(typ, "ENUM/SET value runs past the event's end")
				}
				v = v[n+int(l):]
			}
		}
	}
	return nil
}

// lenencValue reads a length-encoded integer that fills b (its first byte
// 0xFC, 0xFD or 0xFE announces 2, 3 or 8 bytes); a value of the wrong
// length reads as the largest, so the size check refuses it.
func lenencValue(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	want := lenencSize(b[0])
	if want == 1 {
		want = 0
	}
	switch {
	case want == 0 && len(b) == 1 && b[0] < 0xfb:
		return uint64(b[0])
	case want != 0 && len(b) == want:
		return fixedInt(b[1:])
	}
	return ^uint64(0)
}

func fixedInt(b []byte) uint64 {
	var v uint64
	for i, c := range b {
		v |= uint64(c) << (8 * i)
	}
	return v
}

func isUpdateRows(typ replication.EventType) bool {
	switch typ {
	case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
		replication.PARTIAL_UPDATE_ROWS_EVENT, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1:
		return true
	}
	return false
}

func (g *eventGuard) checkRows(typ replication.EventType, body []byte) error {
	idSize, ph, err := g.tableIDSize(typ)
	if err != nil {
		return err
	}
	if len(body) < ph {
		return damaged(typ, "too short")
	}
	id := fixedInt(body[:idSize])
	flags := binary.LittleEndian.Uint16(body[idSize:])
	pos := idSize + 2
	extra := 0
	if ph == 10 { // version 2: extra data, its length counting itself
		extra = int(binary.LittleEndian.Uint16(body[pos:]))
		if extra < 2 || pos+extra > len(body) {
			return damaged(typ, "extra data length %d", extra)
		}
		pos += extra
	}
	count, n, ok := lenenc(body[pos:])
	if !ok {
		return damaged(typ, "column count runs past the event's end")
	}
	pos += n
	table := g.tables[id]
	switch {
	case count == 0 || count > maxColumns:
		return damaged(typ, "column count %d (want 1 to %d)", count, maxColumns)
	case table == nil:
		return damaged(typ, "table id %d has no table map event before it", id)
	case int(count) != table.columns:
		return damaged(typ, "%d columns, its table map (table id %d) %d", count, id, table.columns)
	}
	bm := (int(count) + 7) / 8
	images := 1
	if isUpdateRows(typ) {
		images = 2
	}
	if len(body)-pos < images*bm {
		return damaged(typ, "column bitmaps of %d bytes run past the event's end", images*bm)
	}
	set := 0
	for i := range images {
		set += bitsSet(body[pos+i*bm:pos+(i+1)*bm], int(count))
	}
	pos += images * bm
	if pos < len(body) && set == 0 {
		// Each row image would take no bytes: go-mysql would decode
		// empty rows forever.
		return damaged(typ, "rows but no column in its bitmaps")
	}
	compressed := typ >= replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1 && typ <= replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1
	if compressed {
		if err := g.checkCompressed(typ, body[pos:]); err != nil {
			return err
		}
	} else if est := g.rowsBytes(typ, id, body[pos:], int(count), body[pos-images*bm:pos], images); est > g.lim.MaxEvent {
		return damaged(typ, "its rows could decode to %d bytes, more than --max-event-size %d", est, g.lim.MaxEvent)
	}
	g.rows = checkedRows{table: table, tableID: id, flags: flags, extra: extra, bitmaps: body[pos-images*bm : pos], rows: pos}
	if flags&replication.RowsEventStmtEndFlag != 0 {
		clear(g.tables) // as go-mysql's parser does
	}
	return nil
}

// rowsBytes bounds what decoding rows (a rows event's bytes after its
// column bitmaps) allocates: decodedRowsBytes, or, when that is over the
// limit and the table map is known, the same cost for the rows counted
// (countRows) plus the rows' own bytes, which go-mysql may copy. A count
// that fails keeps the first bound: counting only ever accepts more.
func (g *eventGuard) rowsBytes(typ replication.EventType, id uint64, rows []byte, columns int, bitmaps []byte, images int) int64 {
	est := decodedRowsBytes(len(rows), columns, bitmaps, images)
	m := g.maps[id]
	if est <= g.lim.MaxEvent || m == nil || m.ev == nil || typ == replication.PARTIAL_UPDATE_ROWS_EVENT {
		return est
	}
	bm := len(bitmaps) / images
	n, err := countRows(m.ev, bitmaps[:bm], bitmaps[(images-1)*bm:], images, rows)
	if err != nil {
		return est
	}
	return rowsCost(n, columns, images) + int64(len(rows))
}

// rowsCost is what n decoded rows of a table of columns cost besides
// their values' bytes: about 48 bytes per column of each image (go-mysql's
// []any and skip list, the txn model's values) and 768 per row (slices,
// the RowChange).
func rowsCost(n, columns, images int) int64 {
	return int64(n) * (int64(images)*int64(columns)*48 + 768)
}

// decodedRowsBytes bounds what go-mysql and the assembler allocate for
// the rows of n bytes of a rows event, by the most rows they could be:
// every row image costs at least its null bitmap in the event, and decoded
// rowsCost, so sparse images of wide tables amplify most.
func decodedRowsBytes(n, columns int, bitmaps []byte, images int) int64 {
	bm := len(bitmaps) / images
	minRow := 0
	for i := range images {
		minRow += (bitsSet(bitmaps[i*bm:(i+1)*bm], columns) + 7) / 8
	}
	if minRow == 0 {
		return 0
	}
	return rowsCost(n/minRow, columns, images)
}

// bitsSet counts the set bits among the first n of bitmap.
func bitsSet(bitmap []byte, n int) int {
	c := 0
	for i, b := range bitmap {
		if rest := n - 8*i; rest < 8 {
			b &= byte(1<<rest - 1)
		}
		c += bits.OnesCount8(b)
	}
	return c
}

// checkCompressed checks a MariaDB compressed body's header: the
// uncompressed size go-mysql allocates before inflating.
func (g *eventGuard) checkCompressed(typ replication.EventType, b []byte) error {
	if len(b) == 0 {
		return damaged(typ, "no compressed data")
	}
	hs := int(b[0] & 0x07)
	if hs == 0 || hs > 4 || len(b) < 1+hs {
		return damaged(typ, "compression header %#x", b[0])
	}
	size := int64(0)
	for _, c := range b[1 : 1+hs] { // big-endian
		size = size<<8 | int64(c)
	}
	if size > g.lim.MaxEvent {
		return damaged(typ, "uncompressed size %d is larger than --max-event-size %d", size, g.lim.MaxEvent)
	}
	// zlib inflates at most 1032 times (RFC 1950/1951: a 258-byte match
	// per 2 bits): a larger size is damage, and go-mysql would allocate it.
	if data := int64(len(b) - 1 - hs); size > data*zlibMaxRatio+64 {
		return damaged(typ, "says it inflates to %d bytes, more than zlib can make of %d", size, data)
	}
	return nil
}

const zlibMaxRatio = 1032

func (g *eventGuard) checkCompressedQuery(typ replication.EventType, body []byte) error {
	// post-header: thread id 4, exec time 4, schema length 1, error 2, status vars length 2
	if len(body) < 13 {
		return damaged(typ, "too short")
	}
	pos := 13 + int(binary.LittleEndian.Uint16(body[11:])) + int(body[8]) + 1
	if pos > len(body) {
		return damaged(typ, "status variables or schema run past the event's end")
	}
	return g.checkCompressed(typ, body[pos:])
}

// checkPayload checks a MySQL compressed transaction (zstd): its declared
// uncompressed size against the transaction limit, and that the payload
// really inflates to no more than that (go-mysql inflates without a bound).
func (g *eventGuard) checkPayload(typ replication.EventType, body []byte) error {
	var size, ctype uint64
	pos := 0
	for {
		if pos >= len(body) {
			return damaged(typ, "no payload")
		}
		ft := body[pos]
		pos++
		if ft == replication.OTW_PAYLOAD_HEADER_END_MARK {
			break
		}
		if pos >= len(body) {
			return damaged(typ, "field %d runs past the event's end", ft)
		}
		fl := int(body[pos])
		pos++
		if fl > 8 || pos+fl > len(body) {
			return damaged(typ, "field %d of length %d", ft, fl)
		}
		// The value is a length-encoded integer (net_field_length in
		// libbinlogevents' transaction_payload_event.cpp), not a fixed
		// one: 960 is written FC C0 03.
		v := lenencValue(body[pos : pos+fl])
		switch ft {
		case replication.OTW_PAYLOAD_COMPRESSION_TYPE_FIELD:
			ctype = v
		case replication.OTW_PAYLOAD_UNCOMPRESSED_SIZE_FIELD:
			size = v
		}
		pos += fl
	}
	if ctype != replication.ZSTD {
		return nil // go-mysql refuses it with an error
	}
	if size == 0 || size > uint64(g.lim.MaxTxn) {
		return damaged(typ, "uncompressed size %d (limit --max-txn-size %d)", size, g.lim.MaxTxn)
	}
	// A frame's window is a power of two that may exceed the content
	// (MySQL 8.0.28 wrote 246012 bytes with a 256 KiB window): allow the
	// next power of two above the size, at least 8 MiB, and check the
	// inflated length below.
	limit := uint64(8 << 20)
	for limit < size {
		limit <<= 1
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(2*limit))
	if err != nil {
		return err
	}
	defer d.Close()
	out, err := d.DecodeAll(body[pos:], make([]byte, 0, size))
	if err != nil || uint64(len(out)) != size {
		return damaged(typ, "payload does not inflate to its declared %d bytes (%d, %v)", size, len(out), err)
	}
	return nil
}

// decodeRowsChecked is go-mysql's rows decoding with the checks that keep
// it finite, for every rows event, including those inside a MySQL
// compressed transaction (which the raw guard does not see).
func decodeRowsChecked(e *replication.RowsEvent, data []byte) error {
	// go-mysql slices values without checking them against len(data): a
	// value that runs past the row data read on into the checksum (or,
	// for stored XA events, into the next event). With no capacity past
	// the end, such a slice panics, and the panic becomes the error.
	data = data[:len(data):len(data)]
	pos, err := e.DecodeHeader(data)
	if err != nil {
		return err
	}
	if e.ColumnCount == 0 || e.ColumnCount > maxColumns {
		return fmt.Errorf("column count %d (want 1 to %d)", e.ColumnCount, maxColumns)
	}
	if e.Table == nil {
		return errors.New("no table map event before it")
	}
	if n := len(e.Table.ColumnType); int(e.ColumnCount) != n || len(e.Table.ColumnMeta) != n {
		return fmt.Errorf("%d columns, its table map %d", e.ColumnCount, n)
	}
	if pos < len(data) && bitsSet(e.ColumnBitmap1, int(e.ColumnCount))+bitsSet(e.ColumnBitmap2, int(e.ColumnCount)) == 0 {
		return errors.New("rows but no column in its bitmaps")
	}
	typ := rowsEventType(e)
	if decodeFast && fastRows(e, typ) {
		return decodeRowsFast(e, data, pos, isUpdateRows(typ))
	}
	if hasOldTemporal(e.Table.ColumnType) {
		// Decoded as if without fractional digits; where that fails, the
		// event is left undecoded (no rows) for the target's definition
		// (txn.RowsEvent.Redecode).
		if decodeRowsOld(e, data, pos, nil) != nil {
			e.Rows = nil
		}
		return nil
	}
	if err := e.DecodeData(pos, data); err != nil {
		return err
	}
	if typ == replication.PARTIAL_UPDATE_ROWS_EVENT {
		return readPartialJSON(e, data, pos)
	}
	return nil
}

// countTxn adds an event of n bytes to the open transaction's size (open
// after the event was assembled) and reports whether the transaction is
// now past the limit.
func (g *eventGuard) countTxn(open bool, n int) bool {
	if !open {
		g.txnBytes = 0
		return false
	}
	g.txnBytes += int64(n)
	return g.txnBytes > g.lim.MaxTxn
}
