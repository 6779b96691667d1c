package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"

	"github.com/prepl/prepl/txn"
)

// MariaDB GTID flags for XA (sql/log_event.h), beyond those txn names.
const (
	flagPreparedXA  uint8 = 64
	flagCompletedXA uint8 = 128
)

// assembler turns go-mysql events, in binlog order, into complete
// transactions. Both readers feed it; it does no I/O.
//
// Invariant: cur is nil between transactions; a transaction is returned
// only when its commit event has been seen, so it is never partial.
//
// XA (MySQL, and MariaDB 10.5+): a prepared XA transaction is two binlog
// groups and becomes two Txns, both with XA set. The prepare group's
// Changes are a script: Stmt "XA START xid", its row changes, Stmt
// "XA END xid", Stmt "XA PREPARE xid" (or "XA COMMIT xid ONE PHASE" when
// MySQL logged a one-phase commit that way). The completing group is one
// Stmt "XA COMMIT xid" or "XA ROLLBACK xid". The applier must run an XA
// Txn's statements as they are, on one connection, instead of wrapping it
// in BEGIN/COMMIT. MariaDB logs "XA COMMIT ... ONE PHASE" as an ordinary
// transaction, which needs nothing special.
type assembler struct {
	flavor txn.Flavor // "" until a format description or GTID event says
	file   string     // current binlog file (base name)
	// fromFiles: reading files (setFile), not a live stream.
	fromFiles bool
	seq       uint64

	tables map[uint64]*tableEntry // by table id, from table map events
	keyBuf []byte                 // appendTableMapKey's, reused
	format *txn.Format            // the format description in force
	stmt   int                    // statement number of the next rows event in cur

	cur     *txn.Txn
	inTxn   bool   // BEGIN seen, or implied by a MariaDB GTID event
	xid     string // XA xid text ("X'7831',X'',1") of the open XA transaction
	lastEnd uint32 // end of the last event seen in file

	// skip says whether the user chose to leave out a transaction that
	// cannot be applied (--skip-gtid, --skip-position); dropping is set
	// while the rest of such a transaction is read and dropped.
	skip     func(gtid string, start txn.Position) bool
	dropping bool
	// tooBig is set while the rest of a transaction larger than
	// --max-txn-size is read and dropped, to refuse it at its end: its
	// limit then, and the error names the whole transaction.
	tooBig int64
	// inflated counts the bytes of compressed column values inflated
	// since takeInflated: memory the events' sizes do not show.
	inflated int64
	// maxEventSize bounds one event's inflated values (Limits.MaxEvent;
	// 0: DefaultMaxEventSize).
	maxEventSize int64

	// Relay logs (startRelay): relay is set while one is read; relayHead
	// until its first transaction starts, when no transaction went on
	// into it; carrying while an open transaction goes on into the next
	// file, whose bytes in the files before are spanBytes; relayNext is
	// the next relay file, named by the replica's rotate that ends the
	// one being read (set by DecodeFile).
	relay, relayHead, carrying bool
	spanBytes                  int
	relayNext                  string

	// redecoding: the assembler of redecodeRows, which sets no Redecode.
	redecoding bool
}

type tableEntry struct {
	key   string // appendTableMapKey
	table *txn.Table
	raw   []byte // the table map event as read
	ev    *replication.TableMapEvent
	full  []bool // every column present, shared by full row images
	// compressed marks MariaDB compressed columns (nil when none): their
	// values are inflated as they are read (compressed.go).
	compressed []bool
}

func newAssembler() *assembler {
	return &assembler{tables: make(map[uint64]*tableEntry)}
}

// open reports whether a transaction has started and not yet ended.
func (a *assembler) open() bool { return a.cur != nil }

// setFile starts reading the binlog file called name (file mode): from
// then on positions are in that file, whatever a rotate event inside it
// says (the next file is set by its own setFile). An open transaction is
// dropped, unless a relay log carries it on (carryRelay).
func (a *assembler) setFile(name string) {
	if a.carrying {
		a.carrying, a.file, a.relayNext = false, name, ""
		return
	}
	a.file, a.fromFiles, a.relay, a.relayHead, a.relayNext = name, true, false, false, ""
	a.dropOpen()
}

// dropOpen forgets the open transaction, if any, and what was read of it.
func (a *assembler) dropOpen() {
	a.cur, a.inTxn, a.xid, a.dropping, a.spanBytes, a.tooBig = nil, false, "", false, 0, 0
}

// errRelayFragment: an event, in a relay log given first, of a
// transaction begun in the relay file before it.
var errRelayFragment = errors.New("this relay log begins inside a transaction that started in the relay log file before it, " +
	"which is not given: give that file too (the replica's Relay_Log_File names the file its SQL thread is in)")

// Relay logs (a replica's copy of its source's binlog, relay.go) are
// read like binlogs, with three differences: the source's rotate events
// in them say nothing of the relay file; a transaction, and even a
// statement, may go on in the next relay file; and a transaction cut
// short when the replica's I/O thread reconnected is followed by the
// whole of it again.

// startRelay says that the file being read is a relay log; head: no
// transaction goes on into it from the file before, so its events up to
// the first transaction's start are the end of one that began in a file
// not given.
func (a *assembler) startRelay(head bool) {
	a.relay, a.relayHead = true, head && a.cur == nil
}

// carryRelay says that the relay log being read ended inside a
// transaction, at offset end, and that next, the next file given, goes
// on with it: the file the replica's rotate at its end names.
func (a *assembler) carryRelay(end uint32, next string) error {
	if a.relayNext == "" || next != a.relayNext {
		want := "ends without the rotate to the next relay file"
		if a.relayNext != "" {
			want = "goes on in " + a.relayNext
		}
		return &FormatError{File: a.cur.Start.File, Offset: a.cur.Start.Offset, GTID: a.cur.GTID, Err: fmt.Errorf(
			"%w: this relay log transaction %s, but the next file given is %q; give the relay files in order, none left out",
			ErrIncomplete, want, next)}
	}
	from := uint32(4)
	if a.spanBytes == 0 {
		from = a.cur.Start.Offset
	}
	a.spanBytes += int(end - min(from, end))
	a.carrying = true
	return nil
}

// resent drops the open transaction when one starting with gtid, in a
// relay log, is the source's copy of it, sent again after the replica's
// I/O thread reconnected. Another transaction starting while one is open
// is an error (begin).
func (a *assembler) resent(gtid string) {
	if a.relay && a.cur != nil && a.cur.GTID != "" && a.cur.GTID == gtid {
		a.dropOpen()
	}
}

// EventStart is where the event of header h starts in its binlog file (0
// when its end position does not say).
func EventStart(h *replication.EventHeader) uint32 {
	if h.LogPos >= h.EventSize {
		return h.LogPos - h.EventSize
	}
	return 0
}

func (a *assembler) formatErr(offset uint32, err error) error {
	fe := &FormatError{File: a.file, Offset: offset, Err: err}
	if a.open() {
		fe.GTID = a.cur.GTID // the transaction the event is in
	}
	return fe
}

// add feeds one event and returns the transaction it completes, if any.
func (a *assembler) add(ev *replication.BinlogEvent) (*txn.Txn, error) {
	h := ev.Header
	if _, rotate := ev.Event.(*replication.RotateEvent); !rotate && h.LogPos != 0 {
		// A rotate event's LogPos is in the old file; handle moves
		// lastEnd to its position in the new one.
		defer func() { a.lastEnd = h.LogPos }()
	}
	t, err := a.handle(ev)
	if t != nil && a.tooBig > 0 {
		err, a.tooBig = a.refuseTooBig(t, a.tooBig), 0
		return nil, err
	}
	return t, err
}

// overLimit handles an open transaction that has grown past limit
// (--max-txn-size): prepl holds a transaction whole until it applies it.
// It is dropped when the user chose to skip it; otherwise the rest of it
// is read and dropped, and it is refused at its end, before anything of
// it is applied, with an error that says how to go on.
func (a *assembler) overLimit(limit int64) {
	if a.dropping {
		return
	}
	a.cur.Changes, a.dropping = nil, true
	if a.skip == nil || !a.skip(a.cur.GTID, a.cur.Start) {
		a.tooBig = limit
	}
}

// refuseTooBig is the error of a transaction read whole past limit.
func (a *assembler) refuseTooBig(t *txn.Txn, limit int64) error {
	id := t.Start.String()
	if t.GTID != "" {
		id = t.GTID
	}
	return &FormatError{File: t.Start.File, Offset: t.Start.Offset, GTID: t.GTID, Err: fmt.Errorf("transaction of %d bytes "+
		"(%s to offset %d) is larger than --max-txn-size %d; prepl holds a transaction whole in memory until it applies it "+
		"(several times its binlog size), so nothing of this one is applied. To go on, either raise --max-txn-size above %d "+
		"if this host has the memory, or apply the transaction outside prepl and then leave it out "+
		"(prepl replay --skip-gtid %s, or prepl skip --target TARGET %s before prepl replicate): "+
		"mariadb-binlog --start-position=%d --stop-position=%d %s | mariadb --max-allowed-packet=1G --host TARGET "+
		"(add --read-from-remote-server --host SOURCE to read it from the source; the target's max_allowed_packet must "+
		"hold the BINLOG text of its largest statement, 4/3 of its bytes and at most 1 GiB), or by running its "+
		"statements again on the target",
		t.Size, t.Start, t.End.Offset, limit, t.Size, id, id, t.Start.Offset, t.End.Offset, t.Start.File)}
}

func (a *assembler) handle(ev *replication.BinlogEvent) (*txn.Txn, error) {
	h := ev.Header
	if a.relayHead && a.cur == nil {
		switch ev.Event.(type) {
		case *replication.TableMapEvent, *replication.RowsEvent, *rowsEvent, *replication.XIDEvent:
			return nil, a.formatErr(EventStart(h), errRelayFragment)
		}
	}
	switch e := ev.Event.(type) {
	case *replication.FormatDescriptionEvent:
		if a.flavor == "" {
			a.flavor = FlavorOfVersion(e.ServerVersion)
		}
		a.format = newFormat(ev.RawData, FlavorOfVersion(e.ServerVersion), e.ChecksumAlgorithm == replication.BINLOG_CHECKSUM_ALG_CRC32)
		return nil, nil
	case *replication.RotateEvent:
		if a.relay {
			return nil, nil // positions are the relay file's: setFile says
		}
		if a.cur != nil {
			return nil, a.formatErr(a.cur.Start.Offset, errors.New("binlog rotated inside a transaction"))
		}
		if !a.fromFiles { // a live stream: the source moves on to the next file
			a.file = string(e.NextLogName)
			a.lastEnd = uint32(e.Position)
		}
		return nil, nil
	case *replication.MariadbGTIDEvent:
		a.flavor = txn.MariaDB
		g := e.GTID
		gtid := mariaGTID(g.DomainID, g.ServerID, g.SequenceNumber)
		a.resent(gtid)
		if err := a.begin(h); err != nil {
			return nil, err
		}
		a.cur.GTID = gtid
		a.dropIfSkipped()
		a.cur.Domain, a.cur.SeqNo = g.DomainID, g.SequenceNumber
		a.cur.CommitID, a.cur.Flags = e.CommitID, e.Flags
		switch {
		case e.Flags&flagPreparedXA != 0:
			a.cur.XA, a.inTxn = true, true
		case e.Flags&flagCompletedXA != 0:
			a.cur.XA = true
		default:
			a.inTxn = e.Flags&txn.FlagStandalone == 0
		}
		return nil, nil
	case *replication.GTIDEvent:
		return nil, a.mysqlGTID(h, e)
	case *replication.GtidTaggedLogEvent: // MySQL 8.3+: uuid:tag:gno
		return nil, a.mysqlGTID(h, &e.GTIDEvent)
	case *replication.QueryEvent:
		return a.query(h, e)
	case *replication.XIDEvent:
		if a.cur == nil {
			return nil, a.formatErr(EventStart(h), errors.New("commit (XID event) outside a transaction"))
		}
		return a.finish(h), nil
	case *replication.TableMapEvent:
		a.implicitBegin(h)
		if err := a.tableMap(e, ev.RawData); err != nil {
			return nil, a.formatErr(EventStart(h), err)
		}
		return nil, nil
	case *replication.RowsEvent:
		r := fromGoMySQL(e)
		return nil, a.rowsEvent(h, &r, ev.RawData)
	case *rowsEvent:
		return nil, a.rowsEvent(h, e, ev.RawData)
	case *replication.TransactionPayloadEvent:
		var done *txn.Txn
		for _, inner := range e.Events {
			if a.format != nil && a.format.Checksum {
				inner = withChecksum(inner)
			}
			t, err := a.handle(inner)
			if err != nil {
				return nil, err
			}
			if t != nil {
				done = t
			}
		}
		return done, nil
	}
	switch h.EventType {
	case replication.XA_PREPARE_LOG_EVENT:
		if a.cur == nil {
			return nil, a.formatErr(EventStart(h), errors.New("XA PREPARE outside a transaction"))
		}
		sql := "XA PREPARE " + a.xid
		if g, ok := ev.Event.(*replication.GenericEvent); ok && xaOnePhase(g.Data) {
			sql = "XA COMMIT " + a.xid + " ONE PHASE"
		}
		a.cur.XA = true
		a.addStmt(&txn.Statement{SQL: sql})
		return a.finish(h), nil
	case replication.MARIADB_START_ENCRYPTION_EVENT:
		return nil, a.formatErr(EventStart(h), errors.New("encrypted binlogs are not supported"))
	}
	return nil, nil
}

// mariaGTID is a MariaDB GTID's text, domain-server-seq.
func mariaGTID(domain, server uint32, seq uint64) string {
	var b [3*20 + 2]byte
	out := strconv.AppendUint(b[:0], uint64(domain), 10)
	out = strconv.AppendUint(append(out, '-'), uint64(server), 10)
	out = strconv.AppendUint(append(out, '-'), seq, 10)
	return string(out)
}

// begin opens a transaction at a GTID event.
func (a *assembler) begin(h *replication.EventHeader) error {
	a.relayHead = false
	if a.cur != nil {
		return a.formatErr(a.cur.Start.Offset, errors.New("transaction has no commit before the next GTID event"))
	}
	a.cur = a.newTxn(h)
	a.inTxn, a.xid, a.stmt, a.dropping = false, "", 0, false
	return nil
}

// unappliable stops at a transaction that cannot be applied, before
// anything of it, or drops its changes when the user said to skip it.
func (a *assembler) unappliable(err error) error {
	if a.skip != nil && a.skip(a.cur.GTID, a.cur.Start) {
		a.cur.Changes, a.dropping = nil, true
		return nil
	}
	id := "--skip-position " + a.cur.Start.String()
	if a.cur.GTID != "" {
		id = "--skip-gtid " + a.cur.GTID + " (or " + id + ")"
	}
	return &FormatError{File: a.file, Offset: a.cur.Start.Offset, GTID: a.cur.GTID, Err: fmt.Errorf("%w; nothing of this "+
		"transaction is applied. Replay binlogs written with binlog_row_image=FULL, or leave it out with %s "+
		"and set the row by hand", err, id)}
}

// mysqlGTID opens a transaction at a MySQL GTID event, anonymous, plain
// or tagged (the GTID is then "uuid:tag:gno", as MySQL prints it).
func (a *assembler) mysqlGTID(h *replication.EventHeader, e *replication.GTIDEvent) error {
	gtid := ""
	if u, err := uuid.FromBytes(e.SID); err == nil && u != uuid.Nil {
		if tag := e.Tag.String(); tag != "" {
			gtid = fmt.Sprintf("%s:%s:%d", u, tag, e.GNO)
		} else {
			gtid = fmt.Sprintf("%s:%d", u, e.GNO)
		}
	}
	a.resent(gtid)
	if err := a.begin(h); err != nil {
		return err
	}
	if gtid != "" {
		a.cur.GTID = gtid
		a.cur.SeqNo = uint64(e.GNO)
	}
	a.cur.LastCommitted, a.cur.SequenceNumber = e.LastCommitted, e.SequenceNumber
	a.dropIfSkipped()
	return nil
}

// dropIfSkipped drops, as they are read, the rows of a transaction the
// user chose to leave out (--skip-gtid, --skip-position, prepl skip): it
// is not applied, and holding it would cost memory for nothing (a
// transaction refused for its size is then read without being held).
func (a *assembler) dropIfSkipped() {
	if a.skip != nil && a.skip(a.cur.GTID, a.cur.Start) {
		a.dropping = true
	}
}

// implicitBegin opens a transaction at its first event when no GTID event
// did (a binlog without GTIDs).
func (a *assembler) implicitBegin(h *replication.EventHeader) {
	if a.cur == nil {
		a.cur = a.newTxn(h)
		a.stmt = 0
	}
}

// txnChanges is a transaction with room for the changes of most OLTP
// transactions, allocated together: appending them cost up to three
// allocations more.
type txnChanges struct {
	t       txn.Txn
	changes [4]txn.Change
}

// newTxn is a transaction that starts at the event of header h.
func (a *assembler) newTxn(h *replication.EventHeader) *txn.Txn {
	tc := &txnChanges{t: txn.Txn{
		ServerID:       h.ServerID,
		LastCommitted:  -1,
		SequenceNumber: -1,
		Start:          txn.Position{File: a.file, Offset: EventStart(h)},
		Format:         a.format,
	}}
	tc.t.Changes = tc.changes[:0]
	return &tc.t
}

func (a *assembler) addStmt(st *txn.Statement) {
	a.cur.Changes = append(a.cur.Changes, txn.Change{Stmt: st})
	a.stmt++
}

func (a *assembler) query(h *replication.EventHeader, e *replication.QueryEvent) (*txn.Txn, error) {
	sql := string(e.Query)
	kind := classifyQuery(sql)
	if a.cur == nil {
		a.implicitBegin(h)
	}
	stmt := func(ddl bool) *txn.Statement {
		st := &txn.Statement{SQL: sql, Schema: string(e.Schema), DDL: ddl, UnixMicro: int64(h.Timestamp) * 1e6, ErrorCode: e.ErrorCode}
		applyStatusVars(st, e.StatusVars, a.flavor == txn.MariaDB)
		return st
	}
	switch kind {
	case qkBegin:
		a.inTxn = true
		return nil, nil
	case qkCommit:
		return a.finish(h), nil
	case qkRollback:
		if t := a.rolledBackDrop(h); t != nil {
			return t, nil
		}
		a.dropOpen()
		return nil, nil
	case qkSavepoint:
		a.addStmt(stmt(false))
		return nil, nil
	case qkXAStart:
		a.cur.XA, a.inTxn = true, true
		a.xid = xaArgs(sql)
		a.addStmt(stmt(false))
		return nil, nil
	case qkXAEnd:
		a.cur.XA = true
		if a.xid == "" { // MariaDB: XA START is implied by the GTID event
			a.xid = xaArgs(sql)
			start := &txn.Statement{SQL: "XA START " + a.xid, Schema: string(e.Schema)}
			a.cur.Changes = append([]txn.Change{{Stmt: start}}, a.cur.Changes...)
		}
		a.addStmt(stmt(false))
		return nil, nil
	case qkXAPrepare, qkXAComplete, qkXAOnePhase:
		a.cur.XA = true
		a.addStmt(stmt(false))
		return a.finish(h), nil
	case qkDML:
		return nil, a.formatErr(EventStart(h), notRowBased(sql, string(e.Schema)))
	}
	if a.inTxn {
		// A statement inside a row-based transaction (e.g. DROP TEMPORARY
		// TABLE) is executed in the transaction; but the CREATE TABLE of a
		// CREATE TABLE ... SELECT, logged before the rows it selected, is a
		// DDL (it commits implicitly), so the transaction is a DDL one.
		a.addStmt(stmt(createsTable(sql)))
		return nil, nil
	}
	a.addStmt(stmt(true))
	return a.finish(h), nil
}

// rolledBackDrop is the DROP TABLE of a group the server ended with
// ROLLBACK, as a DDL transaction of its own (nil when the group holds
// none). A DROP TABLE commits on its own: the rollback after it undoes
// nothing of it. MariaDB logs a failed CREATE OR REPLACE TABLE, which had
// dropped the old table, as BEGIN, `DROP TABLE IF EXISTS t /* Generated
// to handle failed CREATE OR REPLACE */`, ROLLBACK (log_drop_table);
// MariaDB's replica and `mariadb-binlog | mariadb` drop the table, and
// the `CREATE TABLE t` after it then finds none (main.create_or_replace).
// The group's rows stay rolled back: the server logs none with that DROP
// (it resets the statement's cache before it).
func (a *assembler) rolledBackDrop(h *replication.EventHeader) *txn.Txn {
	if a.cur == nil {
		return nil
	}
	var drops []txn.Change
	for _, c := range a.cur.Changes {
		if c.Stmt != nil && dropsTable(c.Stmt.SQL) {
			st := *c.Stmt
			st.DDL = true
			drops = append(drops, txn.Change{Stmt: &st})
		}
	}
	if drops == nil {
		return nil
	}
	a.cur.Changes = drops
	return a.finish(h)
}

func (a *assembler) finish(h *replication.EventHeader) *txn.Txn {
	t := a.cur
	a.cur, a.inTxn, a.xid = nil, false, ""
	if a.dropping {
		t.Changes, a.dropping = nil, false
	}
	end := h.LogPos
	if end == 0 {
		end = a.lastEnd + h.EventSize
	}
	t.End = txn.Position{File: a.file, Offset: end}
	switch {
	case a.spanBytes > 0: // a relay log's transaction, begun in an earlier file
		t.Size, a.spanBytes = a.spanBytes+int(end)-4, 0
	case t.End.File == t.Start.File && end >= t.Start.Offset:
		t.Size = int(end - t.Start.Offset)
	}
	t.Timestamp = time.Unix(int64(h.Timestamp), 0).UTC()
	if a.flavor == txn.MariaDB && t.GTID != "" && t.Flags&txn.FlagTransactional == 0 && t.Rows() > 0 {
		t.NonTransactional = true
	}
	a.seq++
	t.Seq = a.seq
	return t
}

// tableMap records a table map event, and its raw bytes for the rows
// events that follow it.
func (a *assembler) tableMap(e *replication.TableMapEvent, raw []byte) error {
	old := a.tables[e.TableID]
	if old != nil && old.ev == e { // the guard's repeat of the table map before
		old.raw = raw
		return nil
	}
	a.keyBuf = appendTableMapKey(a.keyBuf[:0], e)
	if old != nil && old.key == string(a.keyBuf) {
		old.raw, old.ev = raw, e
		return nil
	}
	key := string(a.keyBuf)
	if len(a.tables) > 100000 { // table ids are not reused; keep the map bounded
		clear(a.tables)
	}
	t, err := newTable(e)
	if err != nil {
		return err
	}
	var compressed []bool
	if raw != nil {
		if compressed, err = compressedColumns(raw, e); err != nil {
			return err
		}
	}
	full := make([]bool, len(t.Types))
	for i := range full {
		full[i] = true
	}
	a.tables[e.TableID] = &tableEntry{key: key, table: t, raw: raw, ev: e, full: full, compressed: compressed}
	return nil
}

// appendTableMapKey appends what a table map says of its table: equal
// keys mean the same *txn.Table can be reused. (The raw event cannot
// serve: its checksum covers the header, which differs for every event.)
//
// Built by hand, each field prefixed with its length: it runs for every
// table map event, and fmt made it a seventh of prepl's CPU on a busy
// stream.
func appendTableMapKey(b []byte, e *replication.TableMapEvent) []byte {
	field := func(p []byte) {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	field(e.Schema)
	field(e.Table)
	field(e.ColumnType)
	b = binary.AppendUvarint(b, uint64(len(e.ColumnMeta)))
	for _, m := range e.ColumnMeta {
		b = binary.LittleEndian.AppendUint16(b, m)
	}
	field(e.NullBitmap)
	b = binary.AppendUvarint(b, uint64(len(e.ColumnName)))
	for _, n := range e.ColumnName {
		field(n)
	}
	field(e.SignednessBitmap)
	b = binary.AppendUvarint(b, uint64(len(e.PrimaryKey)))
	for _, k := range e.PrimaryKey {
		b = binary.AppendUvarint(b, k)
	}
	return b
}

// newTable is what a table map says of its table.
func newTable(e *replication.TableMapEvent) (*txn.Table, error) {
	n := int(e.ColumnCount)
	t := &txn.Table{
		ID:       e.TableID,
		Schema:   string(e.Schema),
		Name:     string(e.Table),
		Types:    append([]byte(nil), e.ColumnType...),
		Meta:     append([]uint16(nil), e.ColumnMeta...),
		Nullable: make([]bool, n),
	}
	for i := range n {
		_, t.Nullable[i] = e.Nullable(i)
	}
	if names := e.ColumnNameString(); len(names) == n {
		t.Names = names
	}
	if um := e.UnsignedMap(); um != nil {
		t.Unsigned = make([]bool, n)
		for i, u := range um {
			if i < n {
				t.Unsigned[i] = u
			}
		}
	}
	cm, err := collations(e)
	if err != nil {
		return nil, err
	}
	if len(cm) > 0 {
		t.Collations = make([]uint64, n)
		for i, c := range cm {
			if i >= 0 && i < n {
				t.Collations[i] = c
			}
		}
	}
	if len(e.PrimaryKey) > 0 {
		t.PrimaryKey = make([]int, len(e.PrimaryKey))
		for i, c := range e.PrimaryKey {
			t.PrimaryKey[i] = int(c)
		}
	}
	return t, nil
}

// collations reads a table map's column collations (MySQL 8 full row
// metadata). go-mysql indexes the metadata without checking it against
// the column types, and panics on damaged metadata: that is an error.
func collations(e *replication.TableMapEvent) (cm map[int]uint64, err error) {
	defer func() {
		if v := recover(); v != nil {
			cm, err = nil, fmt.Errorf("corrupted TableMapEvent: its charset metadata does not fit its columns (%v)", v)
		}
	}()
	return e.CollationMap(), nil
}

// rowsEvent adds the row changes of a rows event.
func (a *assembler) rowsEvent(h *replication.EventHeader, e *rowsEvent, raw []byte) error {
	a.implicitBegin(h)
	if a.dropping {
		return nil
	}
	if err := a.rows(e, raw); err != nil {
		if errors.Is(err, ErrPartialJSON) {
			return a.unappliable(err)
		}
		return a.formatErr(EventStart(h), err)
	}
	return nil
}

func (a *assembler) rows(e *rowsEvent, raw []byte) error {
	ent := a.tables[e.tableID]
	if ent == nil {
		return fmt.Errorf("rows event for table id %d without its table map event", e.tableID)
	}
	tbl := ent.table
	kind, ok := rowsKind(e.typ)
	if !ok {
		return fmt.Errorf("unsupported rows event type for %s", tbl.QualifiedName())
	}
	n := len(tbl.Types)
	if int(e.columns) != n {
		return fmt.Errorf("rows event for %s has %d columns, its table map %d", tbl.QualifiedName(), e.columns, n)
	}
	step := 1
	if kind == txn.Update {
		step = 2
	}
	if len(e.rows)%step != 0 {
		return fmt.Errorf("update rows event for %s has an odd number of images", tbl.QualifiedName())
	}
	var re *txn.RowsEvent
	var rcs []txn.RowChange
	switch {
	case raw == nil || ent.raw == nil:
		rcs = make([]txn.RowChange, len(e.rows)/step)
	case len(e.rows) == step: // most events hold one row
		one := &oneRow{ev: txn.RowsEvent{Map: ent.raw, Event: raw, Statement: a.stmt, Rows: 1}}
		re, rcs = &one.ev, one.rc[:]
	default:
		re = &txn.RowsEvent{Map: ent.raw, Event: raw, Statement: a.stmt, Rows: len(e.rows) / step}
		rcs = make([]txn.RowChange, len(e.rows)/step)
	}
	if re != nil && !a.redecoding && a.flavor == txn.MariaDB && a.format != nil && hasOldTemporal(tbl.Types) {
		re.Redecode = redecoder(a.format.Event, ent.raw, raw, tbl, a.stmt)
		if len(e.rows) == 0 { // decodeRowsChecked could not decode it as fsp 0
			re.Undecoded, re.Rows = true, 1
			a.cur.Changes = append(a.cur.Changes, txn.Change{Row: &txn.RowChange{Kind: kind, Table: tbl, Flags: e.flags, Event: re}})
		}
	}
	if e.flags&replication.RowsEventStmtEndFlag != 0 {
		a.stmt++
	}
	if len(e.rows) == 0 && hasOldTemporal(tbl.Types) && (re == nil || re.Redecode == nil) {
		return fmt.Errorf("rows event for %s: its TIME, DATETIME or TIMESTAMP values do not decode", tbl.QualifiedName())
	}
	// The rows of one event share their column bitmaps, and are
	// allocated together.
	cols1 := ent.presentColumns(e.bitmap1, n)
	var cols2 []bool
	if kind == txn.Update {
		cols2 = ent.presentColumns(e.bitmap2, n)
	}
	a.cur.Changes = slices.Grow(a.cur.Changes, len(rcs))
	for i := 0; i < len(e.rows); i += step {
		rc := &rcs[i/step]
		*rc = txn.RowChange{Kind: kind, Table: tbl, Flags: e.flags, Event: re}
		var err error
		if re != nil && len(e.raw) == len(e.rows) {
			switch kind {
			case txn.Insert:
				rc.AfterImage = e.raw[i]
			case txn.Delete:
				rc.BeforeImage = e.raw[i]
			case txn.Update:
				rc.BeforeImage, rc.AfterImage = e.raw[i], e.raw[i+1]
			}
		}
		switch kind {
		case txn.Insert:
			rc.After, rc.AfterCols, err = image(tbl, e.rows[i], cols1, e.normalized)
		case txn.Delete:
			rc.Before, rc.BeforeCols, err = image(tbl, e.rows[i], cols1, e.normalized)
		case txn.Update:
			if !e.normalized {
				if err := resolvePartialJSON(tbl, e.rows[i], e.rows[i+1], e.bitmap1); err != nil {
					return err
				}
			}
			rc.Before, rc.BeforeCols, err = image(tbl, e.rows[i], cols1, e.normalized)
			if err == nil {
				rc.After, rc.AfterCols, err = image(tbl, e.rows[i+1], cols2, e.normalized)
			}
		}
		if err == nil && ent.compressed != nil {
			err = a.inflateImages(ent, rc)
		}
		if err != nil {
			return err
		}
		a.cur.Changes = append(a.cur.Changes, txn.Change{Row: rc})
	}
	return nil
}

// inflateImages replaces the values of rc's compressed columns by the
// values they hold.
func (a *assembler) inflateImages(ent *tableEntry, rc *txn.RowChange) error {
	tbl := ent.table
	rc.BeforeImage, rc.AfterImage = nil, nil // they hold the compressed bytes
	for _, img := range [][]txn.Value{rc.Before, rc.After} {
		for c, v := range img {
			b, ok := v.([]byte)
			if !ok || c >= len(ent.compressed) || !ent.compressed[c] {
				continue
			}
			// No server writes an event whose values add up to more
			// than max_allowed_packet's maximum; --max-event-size
			// lowers that bound, for the inflated values too.
			out, err := inflate(b, compressedMost(tbl.Types[c], tbl.Meta[c], a.maxEvent()-a.inflated))
			if err != nil {
				return fmt.Errorf("%s column %d: %w", tbl.QualifiedName(), c+1, err)
			}
			img[c] = out
			a.inflated += int64(len(out))
			a.cur.Inflated += int64(len(out))
		}
	}
	return nil
}

// maxEvent is the most one event's values may hold once inflated: the
// reader's --max-event-size.
func (a *assembler) maxEvent() int64 {
	if a.maxEventSize <= 0 {
		return DefaultMaxEventSize
	}
	return a.maxEventSize
}

// takeInflated returns the bytes inflated since it was last called: by
// the event just added.
func (a *assembler) takeInflated() int {
	n := a.inflated
	a.inflated = 0
	return int(n)
}

// oneRow is the row change of a rows event of one row and the event,
// which it points to, allocated together.
type oneRow struct {
	rc [1]txn.RowChange
	ev txn.RowsEvent
}

// presentColumns is a column bitmap of the table's n columns as a slot
// per column; the full one (binlog_row_image=FULL) is the table's own.
func (t *tableEntry) presentColumns(bitmap []byte, n int) []bool {
	if len(t.full) == n && bitsSet(bitmap, n) == n {
		return t.full
	}
	present := make([]bool, n)
	for c := range n {
		present[c] = c/8 < len(bitmap) && bitmap[c/8]&(1<<(c%8)) != 0
	}
	return present
}

// image converts one row image of len(tbl.Types) columns, in place: a
// slot per column, absent columns nil and marked false in present. A
// normalized image (decodeRowsFast's) is one already.
func image(tbl *txn.Table, row []any, present []bool, normalized bool) ([]txn.Value, []bool, error) {
	if len(row) != len(present) {
		return nil, nil, fmt.Errorf("%s: a row image of %d columns, the table has %d", tbl.QualifiedName(), len(row), len(present))
	}
	if normalized {
		return row, present, nil
	}
	for c, ok := range present {
		if !ok {
			row[c] = nil
			continue
		}
		v, err := normalize(row[c], tbl.Types[c], tbl.Meta[c])
		if err != nil {
			return nil, nil, fmt.Errorf("%s column %d: %w", tbl.QualifiedName(), c+1, err)
		}
		row[c] = v
	}
	return row, present, nil
}

// withChecksum returns a copy of ev, an event of a MySQL 8 transaction
// payload, whose raw bytes end with their CRC32 as the binlog's format
// description event says every event does: MySQL writes the events
// inside a payload without one, and a BINLOG statement that sends them
// after that format description event is refused as corrupt.
func withChecksum(ev *replication.BinlogEvent) *replication.BinlogEvent {
	if len(ev.RawData) < replication.EventHeaderSize {
		return ev
	}
	raw := make([]byte, len(ev.RawData), len(ev.RawData)+replication.BinlogChecksumLength)
	copy(raw, ev.RawData)
	binary.LittleEndian.PutUint32(raw[9:], uint32(len(raw)+replication.BinlogChecksumLength))
	raw = binary.LittleEndian.AppendUint32(raw, crc32.ChecksumIEEE(raw))
	out := *ev
	out.RawData = raw
	return &out
}

// newFormat keeps a format description event for BINLOG statements, with
// the in-use flag cleared as the server does before computing its
// checksum.
func newFormat(raw []byte, flavor txn.Flavor, checksum bool) *txn.Format {
	if len(raw) < replication.EventHeaderSize {
		return nil
	}
	ev := append([]byte(nil), raw...)
	ev[17] &^= logEventBinlogInUse
	return &txn.Format{Event: ev, Flavor: flavor, Checksum: checksum}
}

// FlavorOfVersion is the flavor of a server of version v (SELECT
// VERSION(), or a format description event's server version).
func FlavorOfVersion(v string) txn.Flavor {
	if strings.Contains(strings.ToLower(v), "mariadb") {
		return txn.MariaDB
	}
	return txn.MySQL
}

// xaOnePhase reads the one_phase byte of an XA_PREPARE_LOG_EVENT body.
func xaOnePhase(body []byte) bool { return len(body) > 0 && body[0] != 0 }
