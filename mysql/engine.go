package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// Target implements the engine's Target.
var _ apply.Target = (*Target)(nil)
var _ apply.Planner = (*Target)(nil) // the engine plans compaction; the target renders the plan

// KeepGTIDs writes each source transaction as its own target transaction
// carrying the source GTID (MariaDB SET gtid_domain_id, server_id,
// gtid_seq_no), for replicas that take part in failover; prepl's own
// writes stay out of the target's binlog (see Unlogged).
func KeepGTIDs() Option { return func(t *Target) { t.keepGTID, t.unlogged = true, true } }

// KeepsGTIDs reports whether the target was opened with KeepGTIDs.
func (t *Target) KeepsGTIDs() bool { return t.keepGTID }

// Tables is the catalog of the target's table definitions.
func (t *Target) Tables() txn.Catalog { return t.Catalog }

// Load puts the definitions of the tables tx changes in the catalog.
func (t *Target) Load(ctx context.Context, tx *txn.Txn) error { return t.Catalog.LoadTxn(ctx, tx) }

// Checkpoints returns the stored positions of this channel, by slot.
func (t *Target) Checkpoints(ctx context.Context) (map[string]position.Checkpoint, error) {
	return t.Positions(ctx)
}

// Classify tells the engine how to treat err: a server's refusal (an
// error number that is neither a conflict nor a lost connection) is
// apply.Refused.
func (t *Target) Classify(err error) apply.Class {
	c := Classify(err)
	if c == Fatal && ErrorCode(err) != 0 {
		return apply.Refused
	}
	return c
}

// lockWaitsSQL lists every transaction in LOCK WAIT, with its blockers
// where INNODB_LOCK_WAITS names them and 0 where it does not (some waits,
// e.g. an INSERT on a gap lock, have been reported missing from it on
// MariaDB 10.11; INNODB_TRX's state shows every wait).
const lockWaitsSQL = `SELECT r.trx_mysql_thread_id, COALESCE(b.trx_mysql_thread_id, 0)
FROM information_schema.INNODB_TRX r
LEFT JOIN information_schema.INNODB_LOCK_WAITS w ON w.requesting_trx_id = r.trx_id
LEFT JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id
WHERE r.trx_state = 'LOCK WAIT'`

// LockWaits reads InnoDB's lock waits. An applier outside the server
// cannot see the waits of its own connections any other way. MySQL 8 has
// no INNODB_LOCK_WAITS: apply.ErrNoLockWaits. Any other error (a busy
// server, a lost connection) is only this poll's.
func (t *Target) LockWaits(ctx context.Context) ([]apply.ConnWait, error) {
	rows, err := t.DB.QueryContext(ctx, lockWaitsSQL)
	if err != nil {
		if c := ErrorCode(err); c == 1109 || c == 1146 { // unknown table
			return nil, fmt.Errorf("%w: %w", apply.ErrNoLockWaits, err)
		}
		return nil, err
	}
	defer rows.Close()
	var ws []apply.ConnWait
	for rows.Next() {
		var w apply.ConnWait
		if rows.Scan(&w.Requester, &w.Blocker) == nil {
			ws = append(ws, w)
		}
	}
	return ws, rows.Err()
}

// Kill interrupts the statement connection id runs (KILL QUERY), and
// watches the connection until it has answered a round trip begun after
// the kill: see watchKilled.
func (t *Target) Kill(ctx context.Context, id uint64) error {
	if _, err := t.DB.ExecContext(ctx, "KILL QUERY "+strconv.FormatUint(id, 10)); err != nil {
		return err
	}
	if t.sends.killed(id) {
		go t.watchKilled(id)
	}
	return nil
}

// Watching a killed connection: how often, and how long the server must
// have been idle while the client still waits for a round trip's answer.
var (
	killWatchEvery = 500 * time.Millisecond
	killStuckAfter = 2 * time.Second
)

// watchKilled ends a round trip that a KILL QUERY left without an answer.
// MariaDB runs a multi-statement chunk one statement after another and,
// after each but the last, answers "more results follow"; when the kill
// lands between two statements (or before the first: a kill that comes
// while the thread is idle or reads the chunk stays pending into it) it
// stops there and answers nothing more. The client then waited forever,
// the server thread slept with the transaction and its locks open, and
// the earlier unit waiting for them never proceeded (replicate --mode
// aggressive hung). So while a round trip is in flight on a killed
// connection, the watch reads the server thread's state: when the thread
// has been idle for killStuckAfter and the round trip started before that
// idle time did (the server ended the round trip's command and the client
// still waits), twice in a row, it kills the connection (KILL CONNECTION): the client's
// read fails as a lost connection, the worker reconnects, and its unit,
// never committed, is rolled back by the server and applied again in
// order. The watch ends once a round trip begun after the last kill has
// returned (the kill is spent), or the connection is gone.
func (t *Target) watchKilled(id uint64) {
	defer t.sends.unwatch(id)
	q := "KILL CONNECTION " + strconv.FormatUint(id, 10)
	fails, idlePolls := 0, 0
	var stuckSince time.Time // the round trip seen stuck at the last poll
	for {
		time.Sleep(killWatchEvery)
		since, inFlight, pending := t.sends.state(id)
		if !pending {
			return
		}
		if !inFlight {
			// The client is idle with the kill pending (a unit waiting
			// for its turn to commit): check now and then that the
			// connection still exists.
			if idlePolls++; idlePolls%20 != 0 {
				continue
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		idle, found, err := t.threadIdle(ctx, id)
		if err == nil && !found {
			cancel()
			return // the connection is gone: a client's read fails
		}
		// Stuck: the server's idle time began after the round trip did
		// (it ended the round trip's command), seen twice in a row for
		// the same round trip (a server slow to start reading a chunk
		// has been idle since before it).
		stuck := err == nil && inFlight && idle >= killStuckAfter && time.Since(since) > idle
		switch {
		case !stuck:
			stuckSince = time.Time{}
		case !since.Equal(stuckSince):
			stuck, stuckSince = false, since // the first time: look again
		}
		if stuck {
			if s2, ok, _ := t.sends.state(id); ok && s2.Equal(since) {
				t.logWarn("a killed connection's round trip got no answer from the target: killing the connection; its unit is applied again",
					"conn", id, "server_idle", idle.Round(time.Millisecond), "waiting_for", time.Since(since).Round(time.Millisecond))
				_, err = t.DB.ExecContext(ctx, q)
			}
			cancel()
			if err != nil {
				t.logWarn("kill connection of a killed round trip left without an answer failed", "conn", id, "err", err)
			}
			return
		}
		cancel()
		if err != nil {
			if fails++; fails >= 20 {
				t.logWarn("watching a killed connection: cannot read the target's process list", "conn", id, "err", err)
				return
			}
		} else {
			fails = 0
		}
	}
}

// threadIdle reads how long the server thread id has been idle (no
// statement running: the Sleep command, or Killed with no statement when a
// kill came while it slept); busy is 0. found is false when the thread
// does not exist.
func (t *Target) threadIdle(ctx context.Context, id uint64) (idle time.Duration, found bool, err error) {
	var (
		cmd  string
		info sql.NullString
		ms   float64
	)
	err = t.DB.QueryRowContext(ctx, `SELECT COMMAND, INFO, TIME_MS FROM information_schema.PROCESSLIST WHERE ID = ?`, id).Scan(&cmd, &info, &ms)
	if ErrorCode(err) == 1054 { // MySQL: no TIME_MS
		var s int64
		err = t.DB.QueryRowContext(ctx, `SELECT COMMAND, INFO, TIME FROM information_schema.PROCESSLIST WHERE ID = ?`, id).Scan(&cmd, &info, &s)
		ms = float64(s) * 1000
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	if info.Valid || (cmd != "Sleep" && cmd != "Killed") {
		return 0, true, nil
	}
	return time.Duration(ms * float64(time.Millisecond)), true, nil
}

// sendTracker knows, per connection id, the round trip a worker's
// connection has in flight (Conn.exec) and whether a kill is pending on
// it, so that a kill can be watched until it is spent.
type sendTracker struct {
	mu   sync.Mutex
	gen  uint64 // numbers round trips, in the order they start
	conn map[uint64]*sendState
}

type sendState struct {
	gen      uint64    // the round trip in flight (0: none)
	since    time.Time // when it started
	killedAt uint64    // the last kill came after round trips 1..killedAt started (0: no kill pending)
	watched  bool      // a watchKilled runs
}

func (s *sendTracker) get(id uint64) *sendState {
	if s.conn == nil {
		s.conn = map[uint64]*sendState{}
	}
	st, ok := s.conn[id]
	if !ok {
		st = &sendState{}
		s.conn[id] = st
	}
	return st
}

// drop forgets a connection with nothing in flight, no kill pending and
// no watch.
func (s *sendTracker) drop(id uint64, st *sendState) {
	if st.gen == 0 && st.killedAt == 0 && !st.watched {
		delete(s.conn, id)
	}
}

// start records that connection id starts a round trip; the function it
// returns records its end. A round trip begun after a kill that returns
// spends the kill.
func (s *sendTracker) start(id uint64) (end func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	gen := s.gen
	st := s.get(id)
	st.gen, st.since = gen, time.Now()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		st, ok := s.conn[id]
		if !ok || st.gen != gen {
			return
		}
		st.gen, st.since = 0, time.Time{}
		if st.killedAt < gen {
			st.killedAt = 0
		}
		s.drop(id, st)
	}
}

// killed records a kill of connection id, and reports whether a watch
// must start (none runs).
func (s *sendTracker) killed(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.get(id)
	st.killedAt = s.gen
	if st.watched {
		return false
	}
	st.watched = true
	return true
}

// state is connection id's round trip in flight, if any, and whether a
// kill is pending on it.
func (s *sendTracker) state(id uint64) (since time.Time, inFlight, pending bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.conn[id]
	if !ok {
		return time.Time{}, false, false
	}
	return st.since, st.gen != 0, st.killedAt != 0
}

// unwatch records the end of connection id's watch, and forgets the
// connection: a watch ends when its kill is spent or the connection is
// gone.
func (s *sendTracker) unwatch(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.conn[id]; ok {
		st.watched, st.killedAt = false, 0
		s.drop(id, st)
	}
}

// String names the target's endpoint.
func (t *Target) String() string { return t.Endpoint.String() }
