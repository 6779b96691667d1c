package mysql

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/txn"
)

// A commit unit's compacted inserts and updates cost a MariaDB target
// about 0.56 of their SQL's CPU when they arrive as rows events in a
// BINLOG statement (docs/benchmarks.md, "The target's CPU per row change,
// by statement shape"): the server neither parses nor evaluates values,
// and finds an updated row by its key instead of trying an insert first.
// compact keeps each row's images as the binlog carried them
// (compact.RawImages), so the events are built from the source's own
// bytes, under a copy of the source's table map: nothing is re-encoded
// but the event headers. The server applies them as MariaDB's replica
// applies the source's (slave_exec_mode STRICT): an insert of a row that
// exists or an update of a row that does not fails, and the unit is
// applied again in source order (ErrCompacted), where a divergence is
// named row by row. Deletes stay `DELETE … IN` statements, which cost
// what a delete rows event does.
//
// Only where nothing is converted: a MariaDB binlog into a MariaDB
// target whose user may run BINLOG (BINLOG REPLAY, or SUPER before
// 10.5.2), and a table whose target columns are the binlog's, type for
// type (takesRaw): the replica would convert nothing either.

// Bounds of what one event and one BINLOG statement carry: an event of
// at most rowsEventMax bytes of images (the server's own are 8 KiB,
// binlog_row_event_max_size), a statement whose text stays under
// maxBatch.
const (
	rowsEventMax = 64 << 10
	stmtRawMax   = maxBatch / 4 * 3
	updateRowsV1 = 24
	// Rows event flags (MariaDB's log_event.h).
	rowsFlagNoFKChecks = 0x0002
)

// useRowEvents decides, at Open, whether compacted rows go as rows
// events: on a MariaDB target whose user holds BINLOG REPLAY (or SUPER),
// unless turned off (SQLRows).
func (t *Target) useRowEvents(ctx context.Context) {
	if t.sqlRows || !t.IsMariaDB || t.readOnly && !t.calibrating {
		return
	}
	why := ""
	g, err := ReadGrants(ctx, t.DB)
	var logBin int
	var format string
	switch {
	case err != nil:
		why = "its grants could not be read (" + err.Error() + ")"
	case g.Unknown:
		why = "its user's grants come through roles, which prepl does not resolve"
	case !g.Has("BINLOG REPLAY", ""):
		why = "its user lacks BINLOG REPLAY (or SUPER)"
	case t.DB.QueryRowContext(ctx, "SELECT @@log_bin, @@binlog_format").Scan(&logBin, &format) != nil:
		why = "@@binlog_format could not be read"
	case logBin == 1 && format == "STATEMENT":
		why = "its binlog_format is STATEMENT, which refuses rows events"
	default:
		t.rowEvents = true
		return
	}
	if t.log != nil {
		t.log.Info("compacted rows go to the target as SQL, not as rows events (BINLOG statements), which cost the server about half as much: " + why)
	}
}

// minEventRows is the fewest rows a unit sends as rows events: they take
// a round trip of their own (and the format description event one, once
// per connection), which costs more than the server saves on a few rows
// (about 2.4 µs each). With --keep-gtid, whose units are single
// transactions sent many to a round trip, they never do.
var minEventRows = 32

// eventNets returns the nets of txs's plan whose inserts and updates go
// as rows events.
func (t *Target) eventNets(txs []*txn.Txn, nets []*compact.Net) []*compact.Net {
	f := txs[0].Format
	if !t.sendsEvents(f) {
		return nil
	}
	// The images are read under the events' format description event,
	// which the connection sends once: one for the whole unit.
	for _, tx := range txs[1:] {
		if tx.Format == nil || &tx.Format.Event[0] != &f.Event[0] && string(tx.Format.Event) != string(f.Event) {
			return nil
		}
	}
	var out []*compact.Net
	rows := 0
	for _, n := range nets {
		if t.netAsEvents(n) {
			out = append(out, n)
			rows += len(n.Raw.Inserts) + len(n.Raw.Updates)
		}
	}
	if rows < minEventRows {
		return nil
	}
	return out
}

// keylessEvents is the fewest row changes to tables without a row key
// that make a transaction go as the binlog's own rows events
// (eventsVerbatim).
const keylessEvents = 100

// eventsVerbatim says why tx goes as the binlog's own rows events, as
// `mariadb-binlog | mariadb` applies it ("" when it goes as SQL), in one
// pass over its rows:
//
//   - 100 or more row changes to a transactional table without a row
//     key (no primary key, no unique key over NOT NULL columns). As SQL
//     each updated or deleted row is a statement that finds its row by
//     every column (`DELETE … WHERE … LIMIT 1`), a scan of the table or
//     of an index's matches per row; the server applies a rows event as
//     its replica does, each row found through the table's best index or
//     a hash of the event's rows, and its inserts cost it 0.56 of
//     multi-row INSERTs (docs/benchmarks.md, "The target's CPU per row
//     change"). Keyed tables need no such path: a unit's compacted rows
//     go as rows events already.
//   - a value SQL cannot say: a FLOAT(M,D) or DOUBLE(M,D) holding a float
//     at or past 10^(M-D) as a double, as float32(1e30) in a FLOAT(30,0)
//     (main.type_float), which the source stored and the server refuses
//     as SQL (1264). Where the unit's tables are transactional the
//     refusal itself re-sends it so (sendAsEvents); a non-transactional
//     table cannot take back the rows a refused statement wrote, so this
//     is looked for before.
//
// Only where rows events go at all (sendsEvents) and every table tx
// changes takes the binlog's values as they are (eventsFit).
func (t *Target) eventsVerbatim(ctx context.Context, tx *txn.Txn) (string, error) {
	if !t.sendsEvents(tx.Format) {
		return "", nil
	}
	keyless, why := 0, ""
	var last *txn.Table
	var d *txn.TableDef
	var noKey bool    // d has no row key and is transactional
	var bounded []int // d's FLOAT(M,D) and DOUBLE(M,D) columns
	for _, ch := range tx.Changes {
		rc := ch.Row
		if rc == nil {
			continue
		}
		if rc.Table != last {
			last = rc.Table
			var err error
			if d, err = t.table(ctx, last.Schema, last.Name); err != nil {
				return "", err
			}
			noKey = d.RowKey() == nil && d.Transactional
			bounded = bounded[:0]
			for i := range d.Columns {
				if d.Columns[i].FloatDigits > 0 {
					bounded = append(bounded, i)
				}
			}
		}
		if noKey {
			if keyless++; keyless == keylessEvents {
				why = fmt.Sprintf("%s without a row key has %d row changes or more in the transaction, which its rows events apply faster than SQL", d.QualifiedName(), keylessEvents)
				break
			}
		}
		if why = unsayable(rc.After, d, bounded); why != "" {
			break
		}
	}
	if why == "" {
		return "", nil
	}
	if ok, err := t.eventsFit(ctx, tx); !ok || err != nil {
		return "", err
	}
	return why, nil
}

// unsayable says which of the columns bounded of d the image img holds a
// float in that SQL cannot say ("" for none; see eventsVerbatim).
func unsayable(img []txn.Value, d *txn.TableDef, bounded []int) string {
	for _, i := range bounded {
		if i >= len(img) {
			continue
		}
		var f float64
		switch x := img[i].(type) {
		case float32:
			f = float64(x)
		case float64:
			f = x
		default:
			continue
		}
		if c := &d.Columns[i]; math.Abs(f) >= math.Pow10(c.FloatDigits) {
			return fmt.Sprintf("%s column %s holds %g, which SQL cannot say in its %d digits", d.QualifiedName(), c.Name, f, c.FloatDigits)
		}
	}
	return ""
}

// sendsEvents: rows events go to the target at all for transactions of
// the binlog format f (see the package comment of rowevents.go).
func (t *Target) sendsEvents(f *txn.Format) bool {
	return t.rowEvents && !t.keepGTID && f != nil && f.Flavor == txn.MariaDB
}

// fitsMap reports whether the table d has the columns of the table map
// m, type for type (takesRaw), and no hidden ones.
func (t *Target) fitsMap(d *txn.TableDef, m *txn.Table) bool {
	if len(d.Columns) != len(m.Types) || len(m.Meta) != len(m.Types) || len(m.Nullable) != len(m.Types) ||
		d.SystemVersioned || d.HashKeys > 0 || d.HasTriggers {
		return false
	}
	for i := range d.Columns {
		if !t.takesRaw(m, i, &d.Columns[i]) {
			return false
		}
	}
	return true
}

// valueRefused: the server refused a value of a row as SQL in prepl's
// strict session (out of range, an incorrect date, too long, truncated),
// one the source stored all the same: a FLOAT(30,0) holding the float
// nearest 1e30, which as a double is above 10^30 (main.type_float), a
// TIMESTAMP of second 0 with a fraction. SQL cannot say such a value; a
// rows event carries its bytes, which the replica stores as they are.
func valueRefused(err error) bool {
	switch ErrorCode(err) {
	case 1264, 1265, 1292, 1366, 1406:
		return true
	}
	return false
}

// sendAsEvents applies b's transactions again, after the server refused
// one of its values (err), as the binlog's own rows events, as MariaDB's
// replica applies them: where rows events go at all and every table
// takes the binlog's values as they are (fitsMap), so the bytes stored
// are those of the source's column of the same type. Otherwise, or if
// that fails too, err stands.
func (c *Conn) sendAsEvents(ctx context.Context, b *Batch, err error) error {
	if len(b.txs) == 0 {
		return err
	}
	eb, ok, rerr := c.t.eventsBatch(ctx, b.txs)
	if rerr != nil || !ok {
		return err
	}
	if rerr := c.Rollback(ctx); rerr != nil {
		return err
	}
	if c.t.log != nil {
		c.t.log.Info("the target refused a value as SQL that the source stored: applying the unit's rows events as the binlog carries them",
			"txn", describe(b.txs[0]), "err", err)
	}
	for _, ch := range eb.chunks {
		if rerr := c.exec(ctx, ch); rerr != nil {
			return fmt.Errorf("%w (and as the binlog's rows events: %v)", err, rerr)
		}
	}
	return nil
}

// eventsBatch renders txs each as the binlog's own rows events (BINLOG
// statements), ok false where they cannot all go so.
func (t *Target) eventsBatch(ctx context.Context, txs []*txn.Txn) (*Batch, bool, error) {
	for _, tx := range txs {
		if !t.sendsEvents(tx.Format) || tx.XA {
			return nil, false, nil
		}
		if ok, err := t.eventsFit(ctx, tx); !ok || err != nil {
			return nil, false, err
		}
	}
	b := &Batch{txs: txs}
	b.begin(txs, false)
	for _, tx := range txs {
		if err := t.renderBinlogTxn(ctx, b, tx, "a value SQL cannot express"); err != nil {
			return nil, false, err
		}
	}
	b.restore()
	return b, true, nil
}

// eventsFit reports whether tx's rows events can be sent as they are:
// whole (no filter kept part of one), decoded without a second look
// (old temporal columns), to tables that take their values as they are.
func (t *Target) eventsFit(ctx context.Context, tx *txn.Txn) (bool, error) {
	var ev *txn.RowsEvent
	var last *txn.Table
	seen := 0
	for _, ch := range tx.Changes {
		rc := ch.Row
		if rc == nil {
			continue
		}
		if rc.Event == nil || len(rc.Event.Event) <= eventHeaderLen || rc.Event.Redecode != nil || rc.Event.Undecoded {
			return false, nil
		}
		if rc.Event != ev {
			if ev != nil && seen != ev.Rows {
				return false, nil
			}
			ev, seen = rc.Event, 0
		}
		seen++
		if rc.Table != last {
			last = rc.Table
			d, err := t.table(ctx, last.Schema, last.Name)
			if err != nil || !t.fitsMap(d, last) {
				return false, err
			}
		}
	}
	return ev == nil || seen == ev.Rows, nil
}

// netAsEvents reports whether n's inserts and updates can go as rows
// events built from the binlog's images.
func (t *Target) netAsEvents(n *compact.Net) bool {
	if n.Raw == nil || len(n.Raw.Inserts)+len(n.Raw.Updates) == 0 {
		return false
	}
	ev := n.Raw.Event
	if len(ev.Event) <= eventHeaderLen || len(ev.Map) <= eventHeaderLen || ev.Event[4] < writeRowsV1 || ev.Event[4] > deleteRowsV1 {
		return false
	}
	return t.fitsMap(n.Def, n.Map)
}

// takesRaw reports whether target column col is of column i's type in
// the table map m exactly, so that the server stores its binlog value
// as it is, converting nothing (MariaDB's replica with
// slave_type_conversions empty, and the same value as prepl's SQL).
func (t *Target) takesRaw(m *txn.Table, i int, col *txn.ColumnDef) bool {
	typ, meta := m.Types[i], m.Meta[i]
	if m.Nullable[i] != col.Nullable || m.Unsigned != nil && m.Unsigned[i] != col.Unsigned {
		return false
	}
	if m.Collations != nil && col.Charset != "" && t.Charsets[uint16(m.Collations[i])] != col.Charset {
		return false
	}
	dt := col.DataType
	switch typ {
	case txn.TypeTiny, txn.TypeShort, txn.TypeInt24, txn.TypeLong, txn.TypeLongLong, txn.TypeFloat, txn.TypeDouble,
		txn.TypeYear, txn.TypeDate:
		return dt == txn.DataTypeName(typ)
	case txn.TypeNewDecimal:
		return dt == "decimal" && col.Precision == int(meta>>8) && col.Scale == int(meta&0xff)
	case txn.TypeVarchar, txn.TypeVarString:
		return (dt == "varchar" || dt == "varbinary") && col.Octets == int(meta)
	case txn.TypeString:
		n, real := txn.StringLength(meta)
		return real == txn.TypeString && (dt == "char" || dt == "binary") && col.Octets == n
	case txn.TypeBlob:
		kinds := [...][2]string{1: {"tinytext", "tinyblob"}, 2: {"text", "blob"}, 3: {"mediumtext", "mediumblob"}, 4: {"longtext", "longblob"}}
		return meta >= 1 && meta <= 4 && (dt == kinds[meta][0] || dt == kinds[meta][1])
	case txn.TypeDatetime2:
		return dt == "datetime" && col.FSP == int(meta)
	case txn.TypeTimestamp2:
		return dt == "timestamp" && col.FSP == int(meta)
	}
	return false
}

// eventRows is a run of one net's inserts or updates that goes in one
// BINLOG statement.
type eventRows struct {
	net      *compact.Net
	update   bool
	from, to int // rows of net.Raw.Inserts or Updates
}

// NetEvents returns BINLOG statements that write the inserts and the
// updates of nets (each netAsEvents) as rows events, under the binlog's
// format f; noFK flags them to run without foreign key checks (a
// compacted unit's rows are not in source order).
func NetEvents(f *txn.Format, nets []*compact.Net, noFK bool) ([]string, error) {
	ff, err := parseFormat(f)
	if err != nil {
		return nil, err
	}
	var stmts [][]eventRows
	var cur []eventRows
	size, most := 0, 0 // the statement's bytes of images; the most of any
	add := func(n *compact.Net, update bool, rows int, rowSize func(int) int) {
		from := 0
		for i := range rows {
			s := rowSize(i)
			if size+s > stmtRawMax && (i > from || len(cur) > 0) {
				if i > from {
					cur = append(cur, eventRows{n, update, from, i})
				}
				stmts, cur, most, size, from = append(stmts, cur), nil, max(most, size), 0, i
			}
			size += s
		}
		if rows > from {
			cur = append(cur, eventRows{n, update, from, rows})
		}
	}
	for _, n := range nets {
		r := n.Raw
		add(n, false, len(r.Inserts), func(i int) int { return len(r.Inserts[i]) })
		add(n, true, len(r.Updates), func(i int) int { return len(r.Updates[i][0]) + len(r.Updates[i][1]) })
	}
	if len(cur) > 0 {
		stmts = append(stmts, cur)
	}
	most = max(most, size)
	out := make([]string, 0, len(stmts))
	// The events of a statement: its images, and for each event and table
	// map at most headers of eventOverhead bytes (and the map's columns).
	const eventOverhead = eventHeaderLen + 6 + 2 + 4 + 4
	overhead := 0
	for _, n := range nets {
		cols := len(n.Map.Types)
		overhead += len(n.Raw.Event.Map) + len(n.Def.Schema) + len(n.Def.Name) + 2*eventOverhead + 4*(cols+7)/8
	}
	need := most + overhead + (most/rowsEventMax+1)*(eventOverhead+64)
	bp := eventBufs.Get().(*[]byte)
	defer eventBufs.Put(bp)
	if cap(*bp) < need {
		*bp = make([]byte, 0, need)
	}
	buf := (*bp)[:0]
	for _, st := range stmts {
		if buf, err = ff.netStatement(buf[:0], st, noFK); err != nil {
			return nil, err
		}
		out = append(out, binlogSQL(buf))
	}
	*bp = buf[:0]
	return out, nil
}

// eventBufs are buffers of a statement's events, before base64: a unit
// fills megabytes of one, which only its text outlives.
var eventBufs = sync.Pool{New: func() any { return new([]byte) }}

// netStatement appends one statement's events: a table map per net
// (table ids 1, 2, … of the statement's own), then its rows events, the
// last flagged as the statement's end.
func (f *format) netStatement(buf []byte, st []eventRows, noFK bool) ([]byte, error) {
	ids := map[*compact.Net]uint64{}
	for _, r := range st {
		if ids[r.net] != 0 {
			continue
		}
		id := uint64(len(ids) + 1)
		ids[r.net] = id
		var err error
		if buf, err = f.tableMap(buf, r.net, id); err != nil {
			return buf, err
		}
	}
	flags := uint16(0)
	if noFK {
		flags |= rowsFlagNoFKChecks
	}
	for k, r := range st {
		raw := r.net.Raw
		for i := r.from; i < r.to; {
			start := len(buf)
			typ := byte(writeRowsV1)
			if r.update {
				typ = updateRowsV1
			}
			buf = f.rowsHeader(buf, raw.Event.Event, typ, ids[r.net], len(r.net.Map.Types))
			for size := 0; i < r.to && (size == 0 || size < rowsEventMax); i++ {
				if r.update {
					img := raw.Updates[i]
					buf = append(append(buf, img[0]...), img[1]...)
					size += len(img[0]) + len(img[1])
				} else {
					buf = append(buf, raw.Inserts[i]...)
					size += len(raw.Inserts[i])
				}
			}
			fl := flags
			if k == len(st)-1 && i == r.to {
				fl |= rowsFlagStmtEnd
			}
			binary.LittleEndian.PutUint16(buf[start+eventHeaderLen+f.tableIDLen(typ):], fl)
			buf = append(buf[:start], f.seal(buf[start:])...)
		}
	}
	return buf, nil
}

// tableMap appends a copy of n's table map event naming the target's
// table (a rewritten schema) with table id id.
func (f *format) tableMap(buf []byte, n *compact.Net, id uint64) ([]byte, error) {
	m, err := f.renameTableMap(n.Raw.Event.Map, n.Def.Schema, n.Def.Name)
	if err != nil {
		return buf, err
	}
	end := len(m)
	if f.checksum {
		end -= 4
	}
	start := len(buf)
	buf = append(buf, m[:end]...)
	putTableID(buf[start+eventHeaderLen:], id, f.tableIDLen(tableMapEvent))
	return append(buf[:start], f.seal(buf[start:])...), nil
}

// rowsHeader appends the header, post-header (flags left 0) and column
// bitmaps of a rows event of type typ of n columns, all present; the
// event header's timestamp, server id and position are hdr's (a rows
// event of the source's).
func (f *format) rowsHeader(buf, hdr []byte, typ byte, id uint64, n int) []byte {
	start := len(buf)
	buf = append(buf, hdr[:eventHeaderLen]...)
	buf[start+4] = typ
	idLen := f.tableIDLen(typ)
	buf = append(buf, make([]byte, idLen+2)...)
	putTableID(buf[start+eventHeaderLen:], id, idLen)
	switch {
	case n < 251:
		buf = append(buf, byte(n))
	case n < 1<<16:
		buf = binary.LittleEndian.AppendUint16(append(buf, 0xfc), uint16(n))
	default:
		buf = append(buf, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	bitmaps := 1
	if typ == updateRowsV1 {
		bitmaps = 2
	}
	for range bitmaps {
		for c := 0; c < n; c += 8 {
			buf = append(buf, byte(1<<min(8, n-c)-1))
		}
	}
	return buf
}

func putTableID(b []byte, id uint64, width int) {
	for i := range width {
		b[i] = byte(id >> (8 * i))
	}
}

// netEventsChunk adds the BINLOG statements of the nets that go as rows
// events to b, in a chunk of their own.
func (b *Batch) netEventsChunk(tx *txn.Txn, nets []*compact.Net) error {
	if len(nets) == 0 {
		return nil
	}
	stmts, err := NetEvents(tx.Format, nets, b.fkOff)
	if err != nil {
		return fmt.Errorf("apply %s: rows events of the compacted unit: %w", describe(tx), err)
	}
	b.checks.flush(b)
	b.binlogChunk(tx)
	c := &b.chunks[len(b.chunks)-1]
	c.each, c.compacted = stmts, true
	b.closeChunk()
	for _, n := range nets {
		b.events += len(n.Raw.Inserts) + len(n.Raw.Updates)
	}
	return nil
}
