package mysql

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prepl/prepl/fault"
)

// A channel is owned by one prepl at a time: the active. Ownership has two
// parts, because a lock alone is a mutex, not a fence:
//
//   - The lease: the channel's GET_LOCK lock, held by a connection of its
//     own whose session wait_timeout is the lease (--takeover-after). The
//     active pings it well within the lease. A prepl that dies, hangs
//     (SIGSTOP, a stuck host) or loses the network stops pinging, and the
//     target drops the connection, and the lock with it, at most one
//     lease after its last ping: nothing on prepl's side has to run for
//     the lock to go, which is what a hung process cannot be trusted with.
//     A standby waits on GET_LOCK and gets the lock the moment it goes.
//   - The fence: an epoch per channel in prepl.channel, raised by each
//     claim. Every position write, in the same statement that stores the
//     position and so in the transaction of the rows it covers, reads the
//     epoch with a locking read and fails (error 1048, a NULL in the NOT
//     NULL column channel_epoch) unless it is the epoch its process
//     claimed. A prepl that lost the channel, woken from a SIGSTOP or back
//     from a partition with its transactions still open, cannot commit
//     one more unit: the rows roll back with the position. A locking read
//     (LOCK IN SHARE MODE) sees the latest committed epoch whatever the
//     session's isolation level, and a raise waits for the position writes
//     in flight, so each unit commits wholly before the raise or not at all.
//
// The fence costs no round trip: a primary-key read of one row and a
// shared lock, inside the statement that writes the position anyway; the
// active never writes prepl.channel while it runs, so the shared locks of
// its workers never wait.
//
// A hung active's worker connections may hold an open transaction, whose
// row locks would stall the new active until the target's wait_timeout
// (8 hours by default) dropped them. So each worker connection also holds
// a named lock of its own, a tag (prepl.conn.N.CHANNEL), and the new
// active, once the epoch is raised, kills the connections holding the
// channel's tags (IS_USED_LOCK names them): their transactions roll back.

// channelTableSQL holds each channel's epoch and who claimed it last.
const channelTableSQL = `CREATE TABLE IF NOT EXISTS ` + PositionSchema + `.channel (
			channel VARCHAR(64) NOT NULL,
			epoch BIGINT UNSIGNED NOT NULL,
			active_host VARCHAR(255) NOT NULL DEFAULT '',
			active_pid BIGINT NOT NULL DEFAULT 0,
			active_since DATETIME(6) NULL COMMENT 'UTC',
			lock_conn BIGINT UNSIGNED NOT NULL DEFAULT 0,
			PRIMARY KEY (channel)
		) ENGINE=InnoDB COMMENT='prepl: the epoch of each channel, raised by each claim; position writes check it'`

// ErrFenced is wrapped when a prepl finds that another took its channel
// over: a position write met a newer epoch (its transaction rolled back),
// or its channel lock is held by another. It must not write again; a
// restart waits for the channel (cmd/prepl exits 3 on it, see
// docs/standby.md). It is fatal (package fault): restarting it as an
// active only meets the other's lock.
var ErrFenced = fault.Fatal(errors.New("fenced: another prepl took over this channel"))

// maxConnTags bounds the tags a process's connections hold (workers and
// their reconnections); a connection past it goes untagged (logged).
const maxConnTags = 128

// lockName is a GET_LOCK name, prefix + channel, at most 64 characters.
func lockName(prefix, channel string) string {
	n := prefix + channel
	if len(n) > 64 {
		h := sha1.Sum([]byte(channel))
		n = prefix + hex.EncodeToString(h[:])
	}
	return n
}

// LockName is the GET_LOCK name of a channel (at most 64 characters).
func LockName(channel string) string { return lockName("prepl.channel.", channel) }

// StandbyLockName is the lock a waiting standby holds, so that prepl
// status can tell one is waiting.
func StandbyLockName(channel string) string { return lockName("prepl.standby.", channel) }

func connTag(channel string, i int) string {
	return lockName("prepl.conn."+strconv.Itoa(i)+".", channel)
}

// ClaimOptions say how to claim a channel.
type ClaimOptions struct {
	// Wait is how long a run that is not a standby waits for the lock: a
	// prepl killed a moment ago may still hold it until the target notices.
	Wait time.Duration
	// Standby waits for the lock as long as it takes (until ctx ends).
	Standby bool
	// Lease is the lock connection's wait_timeout (whole seconds, at least
	// 2): the target drops the lock of an active silent for this long.
	Lease time.Duration
	Log   *slog.Logger
}

// Claim is a held channel.
type Claim struct {
	Epoch uint64
	Since time.Time // when this process became the active, by the target's clock (UTC)
	// Lost is closed when the process lost the channel while running;
	// Err says why then (ErrFenced when another holds it).
	Lost chan struct{}
	err  error

	t       *Target
	lease   int // seconds
	c       *sql.Conn
	mu      sync.Mutex // the lock connection, shared by the keeper and Release
	stop    chan struct{}
	done    chan struct{}
	release sync.Once
}

// Err is why the channel was lost (nil while it is held).
func (cl *Claim) Err() error {
	select {
	case <-cl.Lost:
		return cl.err
	default:
		return nil
	}
}

// ClaimChannel takes the channel: its lock (as a standby, waiting for it),
// then a raised epoch, which fences every earlier holder. It kills the
// connections an earlier holder left tagged, and keeps the lease until
// Release. Position writes of t check the epoch from then on.
func (t *Target) ClaimChannel(ctx context.Context, o ClaimOptions) (*Claim, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	lease := leaseSeconds(o.Lease)
	c, err := t.lockConn(ctx, lease)
	if err != nil {
		return nil, err
	}
	name := LockName(t.Channel)
	if o.Standby {
		err = t.waitStandby(ctx, c, o)
	} else {
		err = t.getLock(ctx, c, name, o.Wait)
	}
	if err != nil {
		discard(c)
		return nil, err
	}
	cl := &Claim{t: t, c: c, lease: lease, Lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	if cl.Epoch, cl.Since, err = t.raiseEpoch(ctx, c); err != nil {
		discard(c)
		return nil, err
	}
	t.epoch.Store(cl.Epoch)
	t.killTagged(ctx, c, o.Log)
	go cl.keep(time.Duration(lease)*time.Second/4, o.Log)
	return cl, nil
}

func leaseSeconds(d time.Duration) int {
	return max(2, int((d+time.Second-1)/time.Second))
}

// lockConn opens the lock connection: its session's wait_timeout is the
// lease, and with kept GTIDs or Unlogged its writes stay out of the binlog.
func (t *Target) lockConn(ctx context.Context, lease int) (*sql.Conn, error) {
	c, err := t.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to target %s: %w", t.Endpoint, err)
	}
	q := "SET SESSION wait_timeout = " + strconv.Itoa(lease)
	if t.unlogged || t.keepGTID {
		q += ", sql_log_bin = 0"
	}
	if _, err := c.ExecContext(ctx, q); err != nil {
		discard(c)
		return nil, fmt.Errorf("set up the channel lock's connection on target %s: %w", t.Endpoint, err)
	}
	return c, nil
}

// getLock takes name on c, waiting up to wait.
func (t *Target) getLock(ctx context.Context, c *sql.Conn, name string, wait time.Duration) error {
	var got sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", name, int(wait.Seconds())).Scan(&got); err != nil {
		return fmt.Errorf("take the channel lock on target %s: %w", t.Endpoint, err)
	}
	if got.Int64 != 1 {
		return fmt.Errorf("another prepl runs on channel %q of target %s (it holds the lock %q%s): stop it first, "+
			"give this one another --channel, or run this one with --standby to take over when it goes",
			t.Channel, t.Endpoint, name, t.ChannelHolder(ctx))
	}
	return nil
}

// standbyPoll is how long one GET_LOCK of a waiting standby lasts: the
// lock is granted the moment it is free, whatever the poll; between polls
// the standby notices a stop and takes the standby lock if it is free.
const standbyPoll = 2 * time.Second

// waitStandby waits for the channel's lock, holding the standby lock
// meanwhile when no other standby does.
func (t *Target) waitStandby(ctx context.Context, c *sql.Conn, o ClaimOptions) error {
	name, standby := LockName(t.Channel), StandbyLockName(t.Channel)
	told, flagged := false, false
	for {
		if !flagged { // GET_LOCK counts: a lock taken twice is released twice
			var got sql.NullInt64
			if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", standby).Scan(&got); err != nil {
				return fmt.Errorf("wait for channel %q on target %s: %w", t.Channel, t.Endpoint, err)
			}
			flagged = got.Int64 == 1
		}
		var got sql.NullInt64
		if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", name, int(standbyPoll.Seconds())).Scan(&got); err != nil {
			return fmt.Errorf("wait for channel %q on target %s: %w", t.Channel, t.Endpoint, err)
		}
		if got.Int64 == 1 {
			if !flagged {
				return nil
			}
			_, err := c.ExecContext(ctx, "DO RELEASE_LOCK(?)", standby)
			return err
		}
		if !told {
			told = true
			active := t.ChannelActive(ctx, t.Channel)
			o.Log.Info("standby: waiting for the channel's active prepl to go", "channel", t.Channel, "active", active)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// raiseEpoch raises the channel's epoch on c, which holds its lock, and
// records this process as its active.
func (t *Target) raiseEpoch(ctx context.Context, c *sql.Conn) (uint64, time.Time, error) {
	if _, err := c.ExecContext(ctx, channelTableSQL); err != nil {
		return 0, time.Time{}, fmt.Errorf("create %s.channel on target: %w", PositionSchema, err)
	}
	host, _ := os.Hostname()
	_, err := c.ExecContext(ctx, "INSERT INTO "+PositionSchema+".channel (channel, epoch, active_host, active_pid, active_since, lock_conn) "+
		"VALUES (?, LAST_INSERT_ID(1), ?, ?, UTC_TIMESTAMP(6), CONNECTION_ID()) ON DUPLICATE KEY UPDATE epoch = LAST_INSERT_ID(epoch + 1), "+
		"active_host = VALUES(active_host), active_pid = VALUES(active_pid), active_since = VALUES(active_since), lock_conn = VALUES(lock_conn)",
		t.Channel, host, os.Getpid())
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("raise the epoch of channel %q on target %s: %w", t.Channel, t.Endpoint, err)
	}
	var epoch uint64
	var since sql.NullTime
	if err := c.QueryRowContext(ctx, "SELECT LAST_INSERT_ID(), (SELECT active_since FROM "+PositionSchema+".channel WHERE channel = ?)", t.Channel).Scan(&epoch, &since); err != nil {
		return 0, time.Time{}, fmt.Errorf("read the epoch of channel %q on target %s: %w", t.Channel, t.Endpoint, err)
	}
	return epoch, since.Time, nil
}

// killTagged kills the connections holding the channel's tags: those of
// an earlier holder (this process has tagged none yet), whose open
// transactions would hold their row locks until the target's
// wait_timeout. They are fenced already; killing them only frees the rows.
func (t *Target) killTagged(ctx context.Context, c *sql.Conn, log *slog.Logger) {
	var q strings.Builder
	args := make([]any, maxConnTags)
	q.WriteString("SELECT ")
	for i := range maxConnTags {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("IS_USED_LOCK(?)")
		args[i] = connTag(t.Channel, i)
	}
	ids := make([]sql.NullInt64, maxConnTags)
	ptrs := make([]any, maxConnTags)
	for i := range ids {
		ptrs[i] = &ids[i]
	}
	if err := c.QueryRowContext(ctx, q.String(), args...).Scan(ptrs...); err != nil {
		log.Warn("could not list the connections of the channel's earlier active; its open transactions hold their rows until the target drops them",
			"channel", t.Channel, "err", err)
		return
	}
	var killed []string
	for _, id := range ids {
		if !id.Valid {
			continue
		}
		_, err := c.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(id.Int64, 10))
		if err != nil && ErrorCode(err) != 1094 { // 1094: gone already
			log.Warn("could not kill a connection of the channel's earlier active", "connection", id.Int64, "err", err)
			continue
		}
		killed = append(killed, strconv.FormatInt(id.Int64, 10))
	}
	if len(killed) > 0 {
		log.Info("killed the connections of the channel's earlier active (fenced; their open transactions roll back)",
			"channel", t.Channel, "connections", strings.Join(killed, ","))
	}
}

// tagConn makes c hold one of the channel's tags, when the channel is
// claimed; a connection of a process that has not claimed it holds none.
func (t *Target) tagConn(ctx context.Context, c *sql.Conn) {
	if t.epoch.Load() == 0 {
		return
	}
	start := int(t.tags.Add(1) - 1)
	for k := range maxConnTags {
		var got sql.NullInt64
		if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", connTag(t.Channel, (start+k)%maxConnTags)).Scan(&got); err != nil {
			return // the connection's next statement meets the same fault
		}
		if got.Int64 == 1 {
			return
		}
	}
	if t.log != nil {
		t.log.Warn("a target connection holds no tag: a standby taking over cannot kill it", "channel", t.Channel, "tags", maxConnTags)
	}
}

// keep pings the lock connection every period and checks that it still
// holds the lock. When the connection is lost (the target restarted, the
// network failed), it takes the lock again on a new one, if no one else
// has it and the epoch is still this claim's: no standby took over. Else
// the channel is lost: Lost closes.
func (cl *Claim) keep(period time.Duration, log *slog.Logger) {
	defer close(cl.done)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-cl.stop:
			return
		case <-tick.C:
		}
		err := cl.check()
		if err == nil {
			continue
		}
		if errors.Is(err, ErrFenced) {
			cl.lose(err, log)
			return
		}
		log.Warn("the channel lock's connection was lost: taking the lock again", "channel", cl.t.Channel, "err", err)
		if err = cl.retake(); err != nil {
			cl.lose(err, log)
			return
		}
		log.Info("channel lock taken again (no other prepl took the channel over)", "channel", cl.t.Channel, "epoch", cl.Epoch)
	}
}

func (cl *Claim) lose(err error, log *slog.Logger) {
	cl.err = err
	close(cl.Lost)
	log.Error("lost the channel: stopping", "channel", cl.t.Channel, "err", err)
}

// check pings: the lock is still this connection's.
func (cl *Claim) check() error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var mine sql.NullInt64
	if err := cl.c.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?) = CONNECTION_ID()", LockName(cl.t.Channel)).Scan(&mine); err != nil {
		return err
	}
	if mine.Int64 != 1 {
		return fmt.Errorf("channel %q: %w (its lock is held by another connection%s)", cl.t.Channel, ErrFenced, cl.t.ChannelHolder(ctx))
	}
	return nil
}

// retake takes the lock on a new connection, within the target's
// reconnect budget; ErrFenced when another prepl holds it or raised the
// epoch meanwhile.
func (cl *Claim) retake() error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	discard(cl.c)
	ctx := context.Background()
	t := cl.t
	return t.Retry(ctx, "take the channel lock again", func() error {
		c, err := t.lockConn(ctx, cl.lease)
		if err != nil {
			return err
		}
		var got sql.NullInt64
		if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", LockName(t.Channel)).Scan(&got); err != nil {
			discard(c)
			return err
		}
		if got.Int64 != 1 {
			discard(c)
			return fmt.Errorf("channel %q: %w (another prepl holds its lock%s)", t.Channel, ErrFenced, t.ChannelHolder(ctx))
		}
		var epoch uint64
		if err := c.QueryRowContext(ctx, "SELECT epoch FROM "+PositionSchema+".channel WHERE channel = ?", t.Channel).Scan(&epoch); err != nil {
			discard(c)
			return err
		}
		if epoch != cl.Epoch {
			discard(c)
			return fmt.Errorf("channel %q: %w (its epoch is %d, this prepl's %d)", t.Channel, ErrFenced, epoch, cl.Epoch)
		}
		// prepl status tells the active's own lock connection by its id.
		if _, err := c.ExecContext(ctx, "UPDATE "+PositionSchema+".channel SET lock_conn = CONNECTION_ID() WHERE channel = ? AND epoch = ?",
			t.Channel, cl.Epoch); err != nil {
			discard(c)
			return err
		}
		cl.c = c
		return nil
	})
}

// Fenced reports, as an ErrFenced error, that another prepl claimed the
// channel since this claim (its epoch moved on); nil when it has not, or
// when the target cannot tell. A run that stops on any error asks: a
// fenced process replaying units the new active applied meets their rows
// (a duplicate key) before its position write could say it is fenced.
func (cl *Claim) Fenced(ctx context.Context) error {
	if cl == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var now uint64
	if err := cl.t.DB.QueryRowContext(ctx, "SELECT epoch FROM "+PositionSchema+".channel WHERE channel = ?", cl.t.Channel).Scan(&now); err != nil || now == cl.Epoch {
		return nil
	}
	return fmt.Errorf("channel %q: %w (its epoch is %d, this prepl's %d)", cl.t.Channel, ErrFenced, now, cl.Epoch)
}

// Release stops the lease and lets the lock go. Position writes still
// check the epoch: a process that released its channel writes no more.
func (cl *Claim) Release() {
	if cl == nil {
		return
	}
	cl.release.Do(func() {
		close(cl.stop)
		<-cl.done
		cl.mu.Lock()
		discard(cl.c) // discarding the connection releases its locks
		cl.mu.Unlock()
	})
}

// fenceExpr is the value position writes store in channel_epoch: the
// claimed epoch, read under a shared lock, or NULL (refused: error 1048)
// when the channel's epoch moved on. "" when the channel is not claimed
// (prepl reset, tests of the engine alone).
func (t *Target) fenceExpr() string {
	e := t.epoch.Load()
	if e == 0 {
		return ""
	}
	return "(SELECT epoch FROM " + PositionSchema + ".channel WHERE channel = " + QuoteString(t.Channel) +
		" AND epoch = " + strconv.FormatUint(e, 10) + " LOCK IN SHARE MODE)"
}

// fenced turns err, a position write's, into ErrFenced when it is the
// fence's refusal and the channel's epoch has indeed moved on (a user's
// own column named channel_epoch cannot pass for it).
func (t *Target) fenced(err error) error {
	e := t.epoch.Load()
	if err == nil || e == 0 || ErrorCode(err) != 1048 || !strings.Contains(err.Error(), "channel_epoch") {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var now uint64
	if qerr := t.DB.QueryRowContext(ctx, "SELECT epoch FROM "+PositionSchema+".channel WHERE channel = ?", t.Channel).Scan(&now); qerr != nil || now == e {
		return err
	}
	return fmt.Errorf("channel %q: %w (its epoch is %d, this prepl's %d): the transaction was rolled back, nothing of it committed: %v",
		t.Channel, ErrFenced, now, e, err)
}

// checkEpoch fails with ErrFenced when the channel's epoch is no longer
// the one this process claimed (nil when it claimed none).
func (t *Target) checkEpoch(ctx context.Context, c *sql.Conn) error {
	e := t.epoch.Load()
	if e == 0 {
		return nil
	}
	var now uint64
	if err := c.QueryRowContext(ctx, "SELECT epoch FROM "+PositionSchema+".channel WHERE channel = ?", t.Channel).Scan(&now); err != nil {
		return fmt.Errorf("read the epoch of channel %q: %w", t.Channel, err)
	}
	if now != e {
		return fmt.Errorf("channel %q: %w (its epoch is %d, this prepl's %d)", t.Channel, ErrFenced, now, e)
	}
	return nil
}

// ChannelActive describes the channel's active prepl as recorded by its
// claim, and whether it holds the lock now ("" when never claimed).
func (t *Target) ChannelActive(ctx context.Context, channel string) string {
	var epoch, conn uint64
	var host string
	var pid int64
	var since sql.NullTime
	err := t.DB.QueryRowContext(ctx, "SELECT epoch, active_host, active_pid, active_since, lock_conn FROM "+PositionSchema+
		".channel WHERE channel = ?", channel).Scan(&epoch, &host, &pid, &since, &conn)
	if err != nil {
		return ""
	}
	var holder sql.NullInt64
	t.DB.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", LockName(channel)).Scan(&holder)
	state := "holds the lock"
	switch {
	case !holder.Valid:
		state = "gone (the lock is free)"
	case uint64(holder.Int64) != conn:
		state = fmt.Sprintf("the lock is held by connection %d, not its own", holder.Int64)
	}
	return fmt.Sprintf("host %s pid %d, active since %s UTC, epoch %d, %s", host, pid, since.Time.Format("2006-01-02 15:04:05"), epoch, state)
}

// ChannelStandby describes the standby waiting on the channel ("" when
// none waits).
func (t *Target) ChannelStandby(ctx context.Context, channel string) string {
	var id sql.NullInt64
	t.DB.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", StandbyLockName(channel)).Scan(&id)
	if !id.Valid {
		return ""
	}
	var host sql.NullString
	t.DB.QueryRowContext(ctx, "SELECT host FROM information_schema.processlist WHERE id = ?", id.Int64).Scan(&host)
	return fmt.Sprintf("connection %d from %s", id.Int64, host.String)
}
