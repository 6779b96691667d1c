package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/store"
)

// A PostgreSQL target is a channel store: its tables in PositionSchema
// hold the positions (position) and the skip requests (skip); an advisory
// lock holds the lock.
var _ store.Store = (*Target)(nil)

// lockKey is the advisory lock's key of a channel.
const lockKey = "hashtext('prepl.channel.' || $1)"

// LockChannel takes the channel's lock, waiting up to wait for a prepl
// that just went away to release it. The lock is an advisory lock held on
// a connection of its own: the server releases it when that connection
// goes, as prepl does.
func (t *Target) LockChannel(ctx context.Context, wait time.Duration) (release func(), err error) {
	c, err := pgx.ConnectConfig(ctx, t.conf.Copy())
	if err != nil {
		return nil, t.connectErr(err)
	}
	deadline := time.Now().Add(wait)
	for {
		var got bool
		if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock("+lockKey+")", t.Channel).Scan(&got); err != nil {
			c.Close(context.Background())
			return nil, fmt.Errorf("take the channel lock on target %s: %w", t, err)
		}
		if got {
			return sync.OnceFunc(func() { c.Close(context.Background()) }), nil
		}
		if time.Now().After(deadline) {
			c.Close(context.Background())
			return nil, fmt.Errorf("another prepl runs on channel %q of target %s (it holds the advisory lock of the channel, "+
				"see pg_locks): stop it first, or give this one another --channel", t.Channel, t)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			c.Close(context.Background())
			return nil, ctx.Err()
		}
	}
}

// Skips lists this channel's skip requests, oldest first.
func (t *Target) Skips(ctx context.Context) ([]store.Skip, error) {
	rows, err := t.Pool.Query(ctx, "SELECT txn, skipped_at IS NOT NULL FROM "+PositionSchema+".skip WHERE channel = $1 ORDER BY requested_at", t.Channel)
	if err != nil {
		return nil, fmt.Errorf("read %s.skip: %w", PositionSchema, err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[store.Skip])
}

// MarkSkipped notes that a run skipped transaction id.
func (t *Target) MarkSkipped(ctx context.Context, id string) error {
	_, err := t.Pool.Exec(ctx, "UPDATE "+PositionSchema+".skip SET skipped_at = now() WHERE channel = $1 AND txn = $2", t.Channel, id)
	return err
}

// ChannelName is the channel the target was opened for.
func (t *Target) ChannelName() string { return t.Channel }

// Channels lists the channels with a stored position, by name.
func (t *Target) Channels(ctx context.Context) ([]string, error) {
	rows, err := t.Pool.Query(ctx, "SELECT DISTINCT channel FROM "+PositionSchema+".position ORDER BY channel")
	if NoPositionTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// HalfApplied is "": every PostgreSQL table is transactional, so no unit
// is ever applied in part.
func (t *Target) HalfApplied(context.Context, string) (string, error) { return "", nil }

// MaybeApplied is "": every PostgreSQL table is transactional, so no unit
// is marked as maybe applied.
func (t *Target) MaybeApplied(context.Context) (string, error) { return "", nil }

// The channel's stored state as prepl skip and prepl reset change it.
var _ store.Admin = (*Target)(nil)

// AddSkip records that this channel's runs skip transaction id.
func (t *Target) AddSkip(ctx context.Context, id string) error {
	_, err := t.Pool.Exec(ctx, "INSERT INTO "+PositionSchema+".skip (channel, txn) VALUES ($1, $2) "+
		"ON CONFLICT (channel, txn) DO UPDATE SET requested_at = now(), skipped_at = NULL", t.Channel, id)
	return err
}

// ResetSkips deletes this channel's skip requests.
func (t *Target) ResetSkips(ctx context.Context) error {
	_, err := t.Pool.Exec(ctx, "DELETE FROM "+PositionSchema+".skip WHERE channel = $1", t.Channel)
	return err
}

// ResetPositions deletes this channel's positions and its records of
// prepared XA transactions (prepl.xa).
func (t *Target) ResetPositions(ctx context.Context) error {
	for _, table := range []string{"position", "xa"} {
		if _, err := t.Pool.Exec(ctx, "DELETE FROM "+PositionSchema+"."+table+" WHERE channel = $1", t.Channel); err != nil {
			return err
		}
	}
	return nil
}

// StorePosition writes p as a stored position of this channel (outside
// any transaction of rows: for prepl reset).
func (t *Target) StorePosition(ctx context.Context, p position.Checkpoint) error {
	_, err := t.Pool.Exec(ctx, t.positionSQL(p))
	return err
}

// ChannelHolder describes the session that holds the channel's advisory
// lock ("" when none does).
func (t *Target) ChannelHolder(ctx context.Context) string {
	var pid int
	var addr *string
	// An advisory lock on one bigint key is (classid, objid) = its high
	// and low 32 bits, objsubid 1.
	err := t.Pool.QueryRow(ctx, `SELECT l.pid, host(a.client_addr) FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		AND ((l.classid::bigint << 32) | l.objid::bigint) = `+lockKey+`::bigint`, t.Channel).Scan(&pid, &addr)
	if err != nil {
		return ""
	}
	from := "a local socket"
	if addr != nil {
		from = *addr
	}
	return fmt.Sprintf(", backend %d from %s", pid, from)
}
