package stream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/txn"
)

// dumpConn is one replication connection to the source. go-mysql's client
// does the handshake (authentication, TLS); the registration as a replica
// and the dump command are written here as go-mysql's BinlogSyncer writes
// them, and the events are then read here, straight off the socket, one
// allocation each.
//
// Why not the BinlogSyncer itself: it reads every event into a pooled
// buffer, copies it twice, parses its header, checks its checksum and
// hands it over a channel in a goroutine of its own, and prepl then
// checks and decodes it again. On a busy stream that was a quarter of
// prepl's CPU (docs/benchmarks.md, "CPU per transaction"). Here the
// reader is the caller of Next, and the event guard checks the checksum
// once.
type dumpConn struct {
	c      *client.Conn
	r      *bufio.Reader
	seq    uint8 // sequence number of the next packet
	max    int64 // largest event accepted (--max-event-size)
	flavor txn.Flavor
	next   binlog.LogPos // where the next event starts
	bufs   binlog.EventBuffers
}

// dumpStart is where a dump starts: a file and offset, or, byGTID, after
// a GTID position (MariaDB's slave_connect_state, or a MySQL GTID set;
// empty: from the oldest binlog the source has).
type dumpStart struct {
	file   string
	pos    uint32
	byGTID bool
	gtid   string
}

// dumpReadBuffer is the socket read buffer: a busy stream's events are
// small, and one read system call should bring many.
const dumpReadBuffer = 256 << 10

// MariaDB's COM_BINLOG_DUMP flag asking for its annotate-rows events too:
// the LogPos of an event sent with 0 is computed from the sizes of all
// events before it, so none may be left out.
const binlogSendAnnotateRows = 2

// openDump connects to the source (its sockets held by l), kills the
// dump connection it replaces (s.dumpID, when not 0: the source would
// otherwise keep sending into it until its next write fails), registers
// as replica s.cfg.ServerID and starts the dump at start, the source
// sending heartbeats every s.cfg.Heartbeat.
func (s *Reader) openDump(ctx context.Context, l *link, password string, start dumpStart) (*dumpConn, error) {
	c, err := s.connect(ctx, l, password, func(c *client.Conn) error {
		c.SetAttributes(map[string]string{"_client_role": "binary_log_listener"})
		return nil
	})
	if err != nil {
		return nil, err
	}
	d := &dumpConn{c: c, max: s.cfg.Limits.WithDefaults().MaxEvent, flavor: s.flavor}
	if err := d.start(&s.cfg, start, s.dumpID); err != nil {
		c.Close()
		return nil, err
	}
	// The client's own buffered reader has read nothing past the last
	// answer: the source sends nothing unasked before the dump command.
	d.r = bufio.NewReaderSize(c.Conn.Conn, dumpReadBuffer)
	d.seq = 1
	return d, nil
}

func (d *dumpConn) start(cfg *Config, start dumpStart, kill uint32) error {
	c := d.c
	if kill != 0 {
		// Best effort: the thread may be gone already (error 1094).
		_, _ = c.Execute(fmt.Sprintf("KILL %d", kill))
	}
	r, err := c.Execute("SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'")
	if err != nil {
		return err
	}
	if alg, _ := resultString(r, 0, 1); alg != "" {
		// As mysqlbinlog: say the replica knows checksums, so that the
		// events come as the binlog has them, checksums included.
		if _, err := c.Execute("SET @master_binlog_checksum='NONE', @source_binlog_checksum='NONE'"); err != nil {
			return err
		}
	}
	if d.flavor == txn.MariaDB {
		// MARIA_SLAVE_CAPABILITY_GTID: GTID events, and a GTID start.
		if _, err := c.Execute("SET @mariadb_slave_capability=4"); err != nil {
			return fmt.Errorf("SET @mariadb_slave_capability=4: %w", err)
		}
	}
	if _, err := c.Execute(fmt.Sprintf("SET @master_heartbeat_period = %d, @source_heartbeat_period = %d",
		cfg.Heartbeat.Nanoseconds(), cfg.Heartbeat.Nanoseconds())); err != nil {
		return fmt.Errorf("set the heartbeat period: %w", err)
	}
	id := uuid.New().String()
	if _, err := c.Execute(fmt.Sprintf("SET @slave_uuid = '%s', @replica_uuid = '%s'", id, id)); err != nil {
		return fmt.Errorf("set the replica UUID: %w", err)
	}
	if err := d.command(registerCommand(cfg)); err != nil {
		return err
	}
	if _, err := c.ReadOKPacket(); err != nil {
		return fmt.Errorf("register as replica %d: %w", cfg.ServerID, err)
	}
	switch {
	case !start.byGTID:
		d.next.Next = max(start.pos, 4)
		return d.command(dumpCommand(d.flavor, cfg.ServerID, start.file, d.next.Next))
	case d.flavor == txn.MariaDB:
		if _, err := c.Execute("SET @slave_connect_state=" + quote(start.gtid)); err != nil {
			return fmt.Errorf("set @slave_connect_state: %w", err)
		}
		// go-mysql's choice: GTIDs out of order in a domain are an error.
		if _, err := c.Execute("SET @slave_gtid_strict_mode=1"); err != nil {
			return fmt.Errorf("set @slave_gtid_strict_mode: %w", err)
		}
		// With @slave_connect_state the file and offset are ignored.
		return d.command(dumpCommand(d.flavor, cfg.ServerID, "", 0))
	default:
		g, err := mysql.ParseMysqlGTIDSet(start.gtid)
		if err != nil {
			return err
		}
		return d.command(dumpGTIDCommand(cfg.ServerID, g.Encode()))
	}
}

// command sends one command packet (data starts with 4 bytes of room for
// the packet header).
func (d *dumpConn) command(data []byte) error {
	d.c.ResetSequence()
	return d.c.WritePacket(data)
}

// registerCommand is COM_REGISTER_SLAVE.
func registerCommand(cfg *Config) []byte {
	host, _ := os.Hostname()
	host = host[:min(len(host), 255)]
	user := cfg.User[:min(len(cfg.User), 255)]
	data := make([]byte, 4, 4+1+4+1+len(host)+1+len(user)+1+2+4+4)
	data = append(data, mysql.COM_REGISTER_SLAVE)
	data = binary.LittleEndian.AppendUint32(data, cfg.ServerID)
	data = append(data, byte(len(host)))
	data = append(data, host...)
	data = append(data, byte(len(user)))
	data = append(data, user...)
	data = append(data, 0) // no password
	data = binary.LittleEndian.AppendUint16(data, cfg.Port)
	data = binary.LittleEndian.AppendUint32(data, 0) // replication rank
	return binary.LittleEndian.AppendUint32(data, 0) // source id
}

// dumpCommand is COM_BINLOG_DUMP from file at pos.
func dumpCommand(flavor txn.Flavor, serverID uint32, file string, pos uint32) []byte {
	var flags uint16 // BINLOG_DUMP_NEVER_STOP
	if flavor == txn.MariaDB {
		flags |= binlogSendAnnotateRows
	}
	data := make([]byte, 4, 4+1+4+2+4+len(file))
	data = append(data, mysql.COM_BINLOG_DUMP)
	data = binary.LittleEndian.AppendUint32(data, pos)
	data = binary.LittleEndian.AppendUint16(data, flags)
	data = binary.LittleEndian.AppendUint32(data, serverID)
	return append(data, file...)
}

// dumpGTIDCommand is MySQL's COM_BINLOG_DUMP_GTID after the encoded set.
func dumpGTIDCommand(serverID uint32, set []byte) []byte {
	data := make([]byte, 4, 4+1+2+4+4+8+4+len(set))
	data = append(data, mysql.COM_BINLOG_DUMP_GTID)
	data = binary.LittleEndian.AppendUint16(data, 0) // flags
	data = binary.LittleEndian.AppendUint32(data, serverID)
	data = binary.LittleEndian.AppendUint32(data, 0) // no file name
	data = binary.LittleEndian.AppendUint64(data, 4)
	data = binary.LittleEndian.AppendUint32(data, uint32(len(set)))
	return append(data, set...)
}

// errEventTooBig is a packet announcing an event over --max-event-size:
// nothing of it is read.
type errEventTooBig struct {
	header []byte // the event's header, when the first packet held it
	size   int64
	max    int64
}

func (e *errEventTooBig) Error() string {
	return fmt.Sprintf("event of more than %d bytes is larger than --max-event-size %d: a damaged length, or raise --max-event-size", e.size, e.max)
}

// maxPayload is the largest packet payload: a longer one continues in
// the next packet.
const maxPayload = 1<<24 - 1

// readEvent returns the next event (its header, body and checksum). It
// is freshly allocated, as the decoded event may keep slices of it,
// except for the types decoded and forgotten before the next event.
func (d *dumpConn) readEvent() ([]byte, error) {
	for {
		n, err := d.header()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errors.New("binlog stream: empty packet from the source")
		}
		if int64(n) > d.max+1 {
			return nil, d.tooBig(n, int64(n))
		}
		typ := replication.UNKNOWN_EVENT // a multi-packet event, or not an event: its own allocation
		if p, err := d.r.Peek(min(n, 6)); err == nil && n < maxPayload && len(p) == 6 && p[0] == mysql.OK_HEADER {
			typ = replication.EventType(p[5])
		}
		buf := d.bufs.Get(n, typ) // as in a file
		if _, err := io.ReadFull(d.r, buf); err != nil {
			return nil, err
		}
		switch buf[0] {
		case mysql.OK_HEADER:
		case mysql.ERR_HEADER:
			if len(buf) < 9 { // code, '#' and SQL state: go-mysql would index past a shorter one
				return nil, fmt.Errorf("binlog stream: the source sent a damaged error packet (%d bytes)", len(buf))
			}
			return nil, d.c.HandleErrorPacket(buf)
		case mysql.EOF_HEADER:
			if n < 9 {
				continue // the end of a non-blocking dump: not asked for
			}
			fallthrough
		default:
			return nil, fmt.Errorf("binlog stream: packet of type 0x%02x where an event was expected", buf[0])
		}
		for m := n; m == maxPayload; {
			if m, err = d.header(); err != nil {
				return nil, err
			}
			if int64(len(buf)+m) > d.max+1 {
				return nil, d.tooBig(0, int64(len(buf)+m))
			}
			buf = slices.Grow(buf, m)[:len(buf)+m]
			if _, err := io.ReadFull(d.r, buf[len(buf)-m:]); err != nil {
				return nil, err
			}
		}
		return buf[1:], nil
	}
}

// tooBig is the error of an event larger than d.max; the header of the
// packet of n bytes still unread is read for the error.
func (d *dumpConn) tooBig(n int, size int64) error {
	e := &errEventTooBig{size: size - 1, max: d.max}
	if n > replication.EventHeaderSize {
		if h, err := d.r.Peek(1 + replication.EventHeaderSize); err == nil {
			e.header = bytes.Clone(h[1:]) // the buffer's bytes are read over next
		}
	}
	return e
}

// header reads a packet header and returns the payload's length.
func (d *dumpConn) header() (int, error) {
	var h [4]byte
	if _, err := io.ReadFull(d.r, h[:]); err != nil {
		return 0, err
	}
	if h[3] != d.seq {
		return 0, fmt.Errorf("binlog stream: packet %d where %d was expected: the connection lost data", h[3], d.seq)
	}
	d.seq++
	return int(h[0]) | int(h[1])<<8 | int(h[2])<<16, nil
}

// atHand reports whether the bytes read ahead from the socket hold the
// whole next transaction: the start of the one after it, a GTID event
// (every transaction has one, on both flavors with GTIDs on), has
// arrived too. Only whole packets are looked at, no further than that.
func (d *dumpConn) atHand() bool {
	buf, _ := d.r.Peek(d.r.Buffered())
	gtids := 0
	for len(buf) >= 4 {
		n := int(buf[0]) | int(buf[1])<<8 | int(buf[2])<<16
		if n == maxPayload || len(buf) < 4+n {
			return false
		}
		if p := buf[4 : 4+n]; len(p) > 5 && p[0] == mysql.OK_HEADER && startsTxn(replication.EventType(p[5])) {
			if gtids++; gtids == 2 {
				return true
			}
		}
		buf = buf[4+n:]
	}
	return false
}

// startsTxn reports whether an event of type typ starts a transaction.
func startsTxn(typ replication.EventType) bool {
	switch typ {
	case replication.MARIADB_GTID_EVENT, replication.GTID_EVENT, replication.ANONYMOUS_GTID_EVENT, replication.GTID_TAGGED_LOG_EVENT:
		return true
	}
	return false
}

// fillLogPos gives a MariaDB event sent with LogPos 0 its end position
// and follows where the next event starts (binlog.LogPos).
func (d *dumpConn) fillLogPos(ev *replication.BinlogEvent) { d.next.Fill(ev, d.flavor) }

// close closes the connection.
func (d *dumpConn) close() { d.c.Close() }

// quote is a MySQL string literal of s (GTID positions: digits, dashes,
// commas, colons, hex).
func quote(s string) string {
	return "'" + mysql.Escape(s) + "'"
}
