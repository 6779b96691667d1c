package stream

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/internal/readahead"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// Config configures a replication connection to a source.
type Config struct {
	Host     string
	Port     uint16
	User     string
	Password string
	// PasswordFunc, when set, gives the password at every connect and
	// reconnect instead of Password (a password file read again, so a
	// rotated secret works).
	PasswordFunc func() (string, error)
	// TLS encrypts the connections to the source (nil: plain).
	// TLSFallback lets a source that offers no TLS be read in plain
	// (ssl-mode PREFERRED); Open then sets TLS to nil.
	TLS         *tls.Config
	TLSFallback bool
	// ServerID is the replica server id prepl presents; it must differ
	// from every server id in the topology. 0 picks 0x7072706c ("prpl")
	// plus a random number below 65536.
	ServerID uint32
	// Flavor of the source; "" detects it with SELECT VERSION().
	Flavor txn.Flavor
	// StartGTID is where to start: the last GTID position applied, as
	// MariaDB's gtid_slave_pos ("0-1-100,1-1-5") or a MySQL GTID set.
	// With StartGTID and StartFile both empty, reading starts at the
	// oldest binlog the source has.
	StartGTID string
	// StartFile/StartPos start at a binlog file and offset instead.
	StartFile string
	StartPos  uint32
	// Heartbeat is how often an idle source sends a heartbeat; default 1s.
	Heartbeat time.Duration
	// ReadTimeout ends the stream with an error when nothing arrives for
	// that long while the reader waits for the source (a dead network or
	// a hung source); default 3*Heartbeat + 2s. Time the caller spends
	// away from Next is not silence.
	ReadTimeout time.Duration
	// StopAtEnd makes Next return io.EOF once every transaction the source
	// had written when Open was called has been returned.
	StopAtEnd bool
	// ReconnectTimeout turns on reconnecting: after a network error Next
	// reconnects with backoff and resumes after the last transaction it
	// returned; it gives up, returning the error, once the source has been
	// unreachable for this long. 0 returns the first network error.
	ReconnectTimeout time.Duration
	// Log receives prepl's own notices about the stream (lost connection,
	// reconnected); nil discards them.
	Log *slog.Logger
	// Limits bound the size of an event and of a transaction.
	Limits binlog.Limits
	// Skip says whether the user chose to leave out a transaction (by
	// GTID or start position) that cannot be read whole: one larger than
	// Limits.MaxTxn is then dropped as it is read instead of refused.
	Skip func(gtid string, start txn.Position) bool
	// KeepRaw keeps a copy of every event received but heartbeats, as the
	// source sent it, for TakeRaw (a relay log writes them to its files).
	KeepRaw bool
}

// Reader reads transactions over the replication protocol.
//
// With ReconnectTimeout set, a network error makes Next reconnect and
// resume at the End of the last transaction it returned, so a transaction
// is never half-read across reconnects. Without it (or once it gives up)
// Next returns the error and the caller reopens from the position it
// applied.
type Reader struct {
	cfg    Config
	flavor txn.Flavor
	dump   *dumpConn // nil while not connected
	dumpID uint32    // its connection id, to kill when replaced
	// The socket is read without a deadline: the end of the context of
	// Next (ctx, stopCtx) closes it and sets cut, and the next call opens
	// a new connection.
	ctx     context.Context
	stopCtx func() bool
	cut     atomic.Bool
	// dec checks and decodes the events and assembles them; a panic in
	// go-mysql's decoding becomes an error there.
	dec *binlog.Decoder
	pos txn.Position // End of the last transaction returned
	err error        // sticky

	// rereadAt is where a damaged event was last met: met again there
	// after reading it anew, the damage is in the source's binlog.
	rereadAt txn.Position

	// StopAtEnd state: the source's end when opened.
	atEnd   bool // already reached (or nothing to read)
	endPos  txn.Position
	endGTID map[uint32]uint64 // MariaDB gtid_binlog_pos per domain
	seen    map[uint32]uint64 // MariaDB GTIDs returned (or covered by StartGTID)

	// Reconnect state: down is when the source was first found unreachable
	// since the last event received (zero while connected).
	down       time.Time
	reconnects atomic.Uint64

	// cipher is the source session's Ssl_cipher ("" plain), seen at open.
	cipher string

	// events counts events received, for the silence watchdog (watch);
	// waiting is set while Next waits for the source's next event, so
	// that a caller that does not call Next (a slow or stopped apply) is
	// not taken for a silent source.
	events    atomic.Uint64
	waiting   atomic.Bool
	stopWatch chan struct{}
	// heard is when the source was last heard from (a heartbeat, a
	// transaction, every 64th event), in Unix nanoseconds: a clock read
	// per event was 6% of prepl's CPU on a busy stream.
	heard atomic.Int64
	// link is the current replication connection's socket; giveUpAt
	// (Unix nanoseconds, 0: none) is a time no connection attempt to the
	// source may run past: the end of the reconnect budget.
	link     atomic.Pointer[link]
	giveUpAt atomic.Int64

	// raw holds the events received since the last transaction returned
	// (KeepRaw).
	raw [][]byte
}

var _ binlog.Reader = (*Reader)(nil)

// connectTimeout bounds one connection to the source: the dial, the
// handshake, the queries before the dump and the dump's start. go-mysql
// bounds only the dial; a source that accepts and then says nothing
// would otherwise hold a connection attempt forever.
const connectTimeout = 10 * time.Second

// Open connects to the source and starts the binlog dump.
func Open(ctx context.Context, cfg Config) (*Reader, error) {
	if cfg.ServerID == 0 {
		cfg.ServerID = 0x7072706c + uint32(rand.IntN(1<<16))
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = time.Second
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 3*cfg.Heartbeat + 2*time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Reader{cfg: cfg, dec: binlog.NewDecoder(cfg.Limits, cfg.Skip), seen: map[uint32]uint64{}}
	s.hear()
	if err := s.inspect(ctx); err != nil {
		return nil, err
	}
	if s.atEnd {
		return s, nil
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// inspect asks the source its flavor, its end position (StopAtEnd) and its
// oldest binlog (MySQL start from the beginning) over a plain connection.
func (s *Reader) inspect(ctx context.Context) error {
	conn, err := s.dial(ctx)
	if err != nil {
		return fmt.Errorf("binlog stream: connect %s: %w%s", s.addr(), err, timeoutHint(err))
	}
	defer conn.Close()
	s.flavor = s.cfg.Flavor
	if s.flavor == "" {
		v, err := queryString(conn, "SELECT VERSION()")
		if err != nil {
			return fmt.Errorf("binlog stream: detect flavor: %w", err)
		}
		s.flavor = binlog.FlavorOfVersion(v)
	}
	s.dec.SetFlavor(s.flavor)
	if s.flavor == txn.MySQL && s.cfg.StartGTID == "" && s.cfg.StartFile == "" {
		r, err := conn.Execute("SHOW BINARY LOGS")
		if err != nil {
			return fmt.Errorf("binlog stream: SHOW BINARY LOGS: %w", err)
		}
		if r.RowNumber() > 0 {
			s.cfg.StartFile, _ = resultString(r, 0, 0)
			s.cfg.StartPos = 4
		}
	}
	if s.flavor == txn.MariaDB && s.cfg.StartGTID != "" {
		g, err := position.ParseMariaDBPos(s.cfg.StartGTID)
		if err != nil {
			return fmt.Errorf("binlog stream: start GTID: %w", err)
		}
		s.seen = g
	}
	if !s.cfg.StopAtEnd {
		return nil
	}
	return s.captureEnd(conn)
}

func (s *Reader) captureEnd(conn *client.Conn) error {
	r, err := conn.Execute("SHOW MASTER STATUS")
	if err != nil {
		r, err = conn.Execute("SHOW BINARY LOG STATUS") // MySQL 8.4
	}
	if err != nil {
		return fmt.Errorf("binlog stream: SHOW MASTER STATUS: %w", err)
	}
	if r.RowNumber() == 0 {
		return errors.New("binlog stream: SHOW MASTER STATUS is empty: the source has no binary log (log_bin=OFF)")
	}
	file, _ := resultString(r, 0, 0)
	pos, _ := r.GetUint(0, 1)
	s.endPos = txn.Position{File: file, Offset: uint32(pos)}
	switch s.flavor {
	case txn.MariaDB:
		g, err := queryString(conn, "SELECT @@gtid_binlog_pos")
		if err != nil {
			return fmt.Errorf("binlog stream: gtid_binlog_pos: %w", err)
		}
		if s.endGTID, err = position.ParseMariaDBPos(g); err != nil {
			return fmt.Errorf("binlog stream: gtid_binlog_pos %q: %w", g, err)
		}
		if s.cfg.StartGTID != "" && position.CoversSeqs(s.seen, s.endGTID) {
			s.atEnd = true
		}
	case txn.MySQL:
		if s.cfg.StartGTID != "" {
			executed, err := queryString(conn, "SELECT @@GLOBAL.gtid_executed")
			if err == nil {
				start, err1 := mysql.ParseMysqlGTIDSet(s.cfg.StartGTID)
				end, err2 := mysql.ParseMysqlGTIDSet(strings.ReplaceAll(executed, "\n", ""))
				if err1 == nil && err2 == nil && start.Contain(end) {
					s.atEnd = true
				}
			}
		}
	}
	if s.cfg.StartGTID == "" && s.cfg.StartFile != "" && position.Compare(txn.Position{File: s.cfg.StartFile, Offset: s.cfg.StartPos}, s.endPos) >= 0 {
		s.atEnd = true
	}
	return nil
}

// dialer connects to the source with a deadline on everything the new
// connection does until it is cleared (link.started): connectTimeout,
// and no later than the end of the reconnect budget.
func (s *Reader) dialer(l *link) client.Dialer {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		now := time.Now()
		deadline := now.Add(connectTimeout)
		if g := s.giveUpAt.Load(); g != 0 {
			deadline = minTime(deadline, maxTime(time.Unix(0, g), now.Add(500*time.Millisecond)))
		}
		dctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		c, err := (&net.Dialer{}).DialContext(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		if err := c.SetDeadline(deadline); err != nil {
			c.Close()
			return nil, err
		}
		if !l.add(c) {
			c.Close()
			return nil, binlog.ErrClosed
		}
		return c, nil
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// timeoutHint explains a timeout on the way to the source.
func timeoutHint(err error) string {
	var ne net.Error
	// go-mysql's packet reader keeps only the text of a read error.
	if errors.As(err, &ne) && ne.Timeout() || strings.Contains(err.Error(), "i/o timeout") {
		return " (the source did not answer in time: check that it is up and that the network lets its replies through)"
	}
	return ""
}

// link holds the socket of one replication connection (start), or of
// one connection that kills it (kill).
type link struct {
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

// add records c; false once the link is closed (c is not to be used).
func (l *link) add(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.conns = append(l.conns, c)
	return true
}

// started clears the replication connection's connect deadline: from now
// on watch judges its silence.
func (l *link) started() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) > 0 {
		l.conns[0].SetDeadline(time.Time{})
	}
}

// closeMain closes the replication connection: its reader fails at once
// and Next reconnects.
func (l *link) closeMain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.conns) > 0 {
		l.conns[0].Close()
	}
}

// closeAll closes every socket and refuses new ones.
func (l *link) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, c := range l.conns {
		c.Close()
	}
}

// start opens the replication stream. Every connection it makes has a
// deadline (dialer); ctx ending aborts them at once.
func (s *Reader) start(ctx context.Context) error {
	password, err := s.password()
	if err != nil {
		return err
	}
	var at dumpStart
	switch {
	case s.cfg.StartFile != "":
		p := s.dec.Position()
		p.File = s.cfg.StartFile
		s.dec.SetPosition(p)
		at = dumpStart{file: s.cfg.StartFile, pos: s.cfg.StartPos}
	case s.flavor == txn.MariaDB:
		g, err := mysql.ParseMariadbGTIDSet(s.cfg.StartGTID)
		if err != nil {
			return fmt.Errorf("binlog stream: start GTID: %w", err)
		}
		at = dumpStart{byGTID: true, gtid: g.String()}
	default:
		if _, err := mysql.ParseMysqlGTIDSet(s.cfg.StartGTID); err != nil {
			return fmt.Errorf("binlog stream: start GTID: %w", err)
		}
		at = dumpStart{byGTID: true, gtid: s.cfg.StartGTID}
	}
	l := &link{}
	s.link.Store(l)
	s.dec.Restart()
	s.stopWatching()
	stop := context.AfterFunc(ctx, l.closeAll)
	d, err := s.openDump(ctx, l, password, at)
	stop()
	if err != nil {
		l.closeAll()
		return fmt.Errorf("binlog stream: start: %w%s", err, timeoutHint(err))
	}
	s.dump, s.dumpID = d, d.c.GetConnectionID()
	l.started()
	s.stopWatch = make(chan struct{})
	go watch(l, &s.events, &s.waiting, s.cfg.ReadTimeout, s.cfg.Log, s.stopWatch)
	return nil
}

// disconnect closes the replication connection, if any. Its thread on
// the source is killed by the next connection (openDump) or by Close.
func (s *Reader) disconnect() {
	if l := s.link.Load(); l != nil {
		l.closeAll()
	}
	if s.dump != nil {
		s.dump.close()
		s.dump = nil
	}
}

// Flavor is the source's flavor.
func (s *Reader) Flavor() txn.Flavor { return s.flavor }

// Position is the End of the last transaction returned: where to resume.
func (s *Reader) Position() txn.Position { return s.pos }

// SourcePosition is how far the source's binlog has been read, including
// events outside transactions and heartbeats: with Position, it gives
// the reader's lag in bytes within a file.
func (s *Reader) SourcePosition() txn.Position { return s.dec.Position() }

// ReadAhead is nil: the stream is read on the caller's goroutine, and
// the engine reads it through a read-ahead of its own (apply.Source).
func (s *Reader) ReadAhead() *readahead.Reader { return nil }

// AtHand reports whether the next transaction has arrived whole, so that
// Next returns it without waiting for the source: a caller catching up
// may then hand on several at once. It must be called from the goroutine
// that calls Next.
func (s *Reader) AtHand() bool {
	return s.dump != nil && s.dump.atHand()
}

// Next returns the next complete transaction. With StopAtEnd it returns
// io.EOF once the source's end at open time has been reached; otherwise
// it waits for the source to write more.
func (s *Reader) Next(ctx context.Context) (*txn.Txn, error) {
	if s.err != nil {
		return nil, s.err
	}
	s.closeOnDone(ctx)
	if s.cut.Load() {
		// A context ended while reading: read again from the last
		// transaction returned.
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.cut.Store(false)
		if _, err := s.restart(ctx); err != nil {
			if ctx.Err() == nil {
				s.err = err
			}
			return nil, err
		}
	}
	for {
		if s.cfg.StopAtEnd && s.reachedEnd() {
			return nil, io.EOF
		}
		var raw []byte
		err := errNotConnected // a reconnect was interrupted
		if s.dump != nil {
			s.waiting.Store(true)
			raw, err = s.dump.readEvent()
			s.waiting.Store(false)
		}
		var ev *replication.BinlogEvent
		var big *errEventTooBig
		switch {
		case errors.As(err, &big):
			err = s.damage(big.header, big)
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err := s.reconnect(ctx, err); err != nil {
				if ctx.Err() == nil {
					s.err = err
				}
				return nil, err
			}
			continue
		default:
			s.down = time.Time{}
			if s.events.Add(1)%64 == 0 {
				s.hear()
			}
			ev, err = s.decode(raw)
		}
		if err != nil { // a damaged event
			if again, rerr := s.reread(ctx, err); again {
				continue
			} else if rerr != nil {
				err = rerr
			}
			s.err = err
			return nil, err
		}
		if hb, ok := ev.Event.(*replication.HeartbeatEvent); ok {
			s.hear()
			s.heartbeat(hb, ev.Header)
			continue
		}
		if s.cfg.KeepRaw {
			s.raw = append(s.raw, bytes.Clone(raw))
		}
		t, err := s.dec.Add(ev, len(raw))
		if err != nil {
			s.err = err
			return nil, err
		}
		if t != nil {
			s.hear()
			s.rereadAt = txn.Position{}
			s.pos = t.End
			if t.GTID != "" && s.flavor == txn.MariaDB && t.SeqNo > s.seen[t.Domain] {
				s.seen[t.Domain] = t.SeqNo
			}
			return t, nil
		}
	}
}

// TakeRaw returns the events received (with KeepRaw) since the previous
// call, heartbeats left out: after Next returned a transaction, its
// events and those before it (rotates, format descriptions) as the
// source sent them, checksums included. Events of a transaction read
// again after a reconnect are those of the new connection only.
func (s *Reader) TakeRaw() [][]byte {
	r := s.raw
	s.raw = nil
	return r
}

// closeOnDone makes ctx's end close the replication connection, once
// per context: Next is called with the same one for every transaction.
func (s *Reader) closeOnDone(ctx context.Context) {
	if ctx == s.ctx {
		return
	}
	if s.stopCtx != nil {
		s.stopCtx()
	}
	s.ctx = ctx
	s.stopCtx = context.AfterFunc(ctx, func() {
		s.cut.Store(true)
		if l := s.link.Load(); l != nil {
			l.closeAll()
		}
	})
}

// decode checks and decodes an event read from the source.
func (s *Reader) decode(raw []byte) (*replication.BinlogEvent, error) {
	ev, err := s.dec.Decode(raw)
	if err != nil {
		return nil, s.damage(raw, err)
	}
	s.dump.fillLogPos(ev)
	return ev, nil
}

// damage is the error of a damaged event, raw its bytes (the header, when
// they hold one, places it).
func (s *Reader) damage(raw []byte, err error) error {
	var off uint32
	if s.dump != nil {
		off = s.dump.next.Next // the end of the event before
	}
	if h := (replication.EventHeader{}); h.Decode(raw) == nil && binlog.EventStart(&h) > 0 {
		off = binlog.EventStart(&h)
	}
	return s.dec.Damage(s.dec.Position().File, off, err)
}

// reread handles a damaged event: the first time at a position, when
// reconnecting is on, it reads the stream again from the last complete
// transaction (the damage may have been on the wire) and returns true.
// Met again at the same place, the damage is in the source's binlog and
// the error stands.
func (s *Reader) reread(ctx context.Context, damage error) (bool, error) {
	var fe *binlog.FormatError
	if s.cfg.ReconnectTimeout <= 0 || !errors.As(damage, &fe) {
		return false, nil
	}
	at := txn.Position{File: fe.File, Offset: fe.Offset}
	if at == s.rereadAt {
		return false, fmt.Errorf("%w (read twice from the source: the damage is in its binlog)", damage)
	}
	s.rereadAt = at
	s.cfg.Log.Warn("damaged event from the source: reading it again from the last complete transaction",
		"err", damage.Error(), "resume_at", s.pos.String())
	reconnected, err := s.restart(ctx)
	if err != nil {
		return false, err
	}
	if !reconnected {
		s.reconnects.Add(1)
		s.cfg.Log.Info("reconnected to source", "source", s.addr(),
			"attempts", 1, "resume_at", s.pos.String())
	}
	return true, nil
}

// restart opens a new replication connection that reads again from the
// last transaction returned. When that fails it reconnects as after a
// network error (reconnected: and said so).
func (s *Reader) restart(ctx context.Context) (reconnected bool, err error) {
	s.disconnect()
	s.rewind()
	if err := s.start(ctx); err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return true, s.reconnect(ctx, err)
	}
	return false, nil
}

func (s *Reader) heartbeat(hb *replication.HeartbeatEvent, h *replication.EventHeader) {
	if s.dec.InTransaction() || h.LogPos == 0 {
		return
	}
	p := s.dec.Position()
	if hb.Filename != "" {
		p.File = hb.Filename
	}
	p.Offset = h.LogPos
	s.dec.SetPosition(p)
}

func (s *Reader) reachedEnd() bool {
	if s.atEnd {
		return true
	}
	if s.dec.InTransaction() {
		return false
	}
	if s.endGTID != nil && len(s.endGTID) > 0 && position.CoversSeqs(s.seen, s.endGTID) {
		s.atEnd = true
	} else if p := s.dec.Position(); p.File != "" && position.Compare(p, s.endPos) >= 0 {
		s.atEnd = true
	}
	return s.atEnd
}

// errNotConnected is the cause of a reconnect when the previous one was
// interrupted before it had a connection.
var errNotConnected = errors.New("not connected")

// Reconnects counts the successful reconnections to the source. It may be
// called while another goroutine is in Next.
func (s *Reader) Reconnects() uint64 { return s.reconnects.Load() }

// hear notes that the source was heard from now.
func (s *Reader) hear() { s.heard.Store(time.Now().UnixNano()) }

// Silence is how long the source has not been heard from (no event, no
// heartbeat) when that is longer than two heartbeat periods, and 0 while
// the source is heard on time. A source that is unreachable, or a reader
// that does not read, shows here: what the source wrote meanwhile has not
// been seen, so the lag is at least this. It may be called while another
// goroutine is in Next.
func (s *Reader) Silence() time.Duration {
	d := time.Since(time.Unix(0, s.heard.Load()))
	if d <= 2*s.cfg.Heartbeat {
		return 0
	}
	return d
}

// Reconnect backoff: the first retry after reconnectFirst, doubling up to
// reconnectMax between attempts.
const (
	reconnectFirst = 100 * time.Millisecond
	reconnectMax   = 5 * time.Second
)

// reconnect replaces a broken replication connection, resuming at the End
// of the last transaction returned (the partial one is read again whole).
// It returns an error when cause is not a network error, when ctx ends, or
// when the source has been unreachable for ReconnectTimeout.
func (s *Reader) reconnect(ctx context.Context, cause error) error {
	addr := s.addr()
	if s.cfg.ReconnectTimeout <= 0 || !retryable(cause) {
		var me *mysql.MyError
		if errors.As(cause, &me) && me.Code == 1236 { // ER_MASTER_FATAL_ERROR_READING_BINLOG
			return fmt.Errorf("binlog stream from %s: %w (the source no longer has the binlog to resume from, "+
				"e.g. purged: re-seed the target from a snapshot, delete the channel's row in prepl.position and start with --start-gtid)", addr, cause)
		}
		return fmt.Errorf("binlog stream from %s: %w", addr, cause)
	}
	if s.down.IsZero() {
		s.down = time.Now()
	}
	// Errors as strings: slog prints error values with %+v, which for
	// go-mysql's errors includes stack traces.
	s.cfg.Log.Warn("source connection lost: reconnecting", "source", addr, "err", cause.Error(),
		"resume_at", s.pos.String(), "give_up_after", s.cfg.ReconnectTimeout)
	// No connection attempt runs past the end of the budget (dialer): the
	// give-up comes on time even when the source accepts connections and
	// never answers.
	giveUpAt := s.down.Add(s.cfg.ReconnectTimeout)
	s.giveUpAt.Store(giveUpAt.UnixNano())
	defer s.giveUpAt.Store(0)
	wait := reconnectFirst
	for attempt := 1; ; attempt++ {
		s.stopWatching()
		s.disconnect()
		s.rewind()
		err := s.start(ctx)
		if err == nil {
			s.reconnects.Add(1)
			s.cfg.Log.Info("reconnected to source", "source", addr, "attempts", attempt,
				"down_for", time.Since(s.down).Round(time.Millisecond), "resume_at", s.pos.String())
			return nil
		}
		if !retryable(err) {
			return fmt.Errorf("binlog stream from %s: reconnect: %w", addr, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !time.Now().Before(giveUpAt) {
			return fmt.Errorf("binlog stream: source %s unreachable for %s (%d reconnect attempts; last error: %v; first: %v): "+
				"check the source and the network, then start prepl again: it resumes from the position stored in the target",
				addr, time.Since(s.down).Round(time.Second), attempt, err, cause)
		}
		s.cfg.Log.Debug("reconnect to source failed", "source", addr, "attempt", attempt, "err", err.Error(), "retry_in", wait)
		select {
		case <-time.After(min(wait, time.Until(giveUpAt))):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(2*wait, reconnectMax)
	}
}

// rewind drops a partly read transaction and makes the next start resume
// at the End of the last transaction returned (or where the stream began,
// when none was).
func (s *Reader) rewind() {
	s.dec.Abandon()
	s.raw = nil
	if s.pos.File == "" {
		return
	}
	s.cfg.StartGTID, s.cfg.StartFile, s.cfg.StartPos = "", s.pos.File, s.pos.Offset
	s.dec.SetPosition(s.pos)
}

// retryable tells a network failure (worth reconnecting) from an answer of
// the source (a purged binlog, bad credentials) that a retry cannot change.
func retryable(err error) bool {
	var me *mysql.MyError
	if errors.As(err, &me) {
		switch me.Code {
		case 1053, 1152, 1158, 1159, 1160, 1161, 1317, 1927, 2006, 2013: // shutdown, aborted, net errors, killed, gone, lost
			return true
		}
		return false
	}
	var fe *binlog.FormatError
	return !errors.As(err, &fe) && !errors.Is(err, binlog.ErrClosed)
}

// Close ends the replication connection, and kills its thread on the
// source over a connection of its own, which gets half a second: the
// source would otherwise go on sending into it until a write fails.
func (s *Reader) Close() error {
	if s.stopCtx != nil {
		s.stopCtx()
	}
	s.stopWatching()
	s.giveUpAt.Store(time.Now().UnixNano())
	s.disconnect()
	s.kill()
	if s.err == nil {
		s.err = binlog.ErrClosed
	}
	return nil
}

// kill kills the thread of the last replication connection on the
// source, best effort, within the dialer's deadline.
func (s *Reader) kill() {
	id := s.dumpID
	s.dumpID = 0
	pw, err := s.password()
	if id == 0 || err != nil {
		return
	}
	l := &link{}
	defer l.closeAll()
	c, err := s.connect(context.Background(), l, pw)
	if err != nil {
		return
	}
	defer c.Close()
	_, _ = c.Execute(fmt.Sprintf("KILL %d", id))
}

func queryString(conn *client.Conn, q string) (string, error) {
	r, err := conn.Execute(q)
	if err != nil {
		return "", err
	}
	defer r.Close()
	if r.RowNumber() == 0 {
		return "", fmt.Errorf("%s: no rows", q)
	}
	return resultString(r, 0, 0)
}

// resultString is the text of one cell of r, copied. go-mysql's GetString
// returns a string over the result's packet buffer, and Close gives that
// buffer back to a pool that every connection of the process draws from:
// the next query of any of them overwrote a source's end GTID after
// queryString returned it (found by the race detector, two streams in
// one process).
func resultString(r *mysql.Result, row, col int) (string, error) {
	v, err := r.GetString(row, col)
	return strings.Clone(v), err
}

func (s *Reader) stopWatching() {
	if s.stopWatch != nil {
		close(s.stopWatch)
		s.stopWatch = nil
	}
}

// watch closes the replication connection when the source has been
// silent for timeout (silence): Next then sees the stream fail and
// reconnects.
func watch(l *link, events *atomic.Uint64, waiting *atomic.Bool, timeout time.Duration, log *slog.Logger, stop <-chan struct{}) {
	tick := time.NewTicker(timeout / 4)
	defer tick.Stop()
	q := silence{last: events.Load(), since: time.Now()}
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			if d := q.observe(now, events.Load(), waiting.Load()); d >= timeout {
				log.Warn("nothing from the source, not even a heartbeat: reconnecting", "silent_for", d.Round(time.Millisecond))
				l.closeMain()
				return
			}
		}
	}
}

// silence measures how long the source has been silent from periodic
// observations of the events received and of whether the reader waits
// for the next one. Only time in which the reader waited counts: while it
// does not read (the caller busy or blocked, events piling up unread and
// the source waiting on us), the source is not silent, we are deaf. The
// quiet time starts at an observation that found the reader waiting, so
// it is measured to within the observation period.
type silence struct {
	last  uint64    // events at the previous observation
	since time.Time // start of the quiet time
}

// observe records events and waiting at now and returns the quiet time.
func (q *silence) observe(now time.Time, events uint64, waiting bool) time.Duration {
	if events != q.last || !waiting {
		q.last, q.since = events, now
		return 0
	}
	return now.Sub(q.since)
}
