package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ChannelLock is the advisory lock a running prepl holds on its channel,
// on a connection of its own: the server releases it when that
// connection goes, as prepl does.
type ChannelLock struct{ c *pgx.Conn }

// lockKey is the advisory lock's key of a channel.
const lockKey = "hashtext('prepl.channel.' || $1)"

// LockChannel takes the channel's lock, waiting up to wait for a prepl
// that just went away to release it.
func (t *Target) LockChannel(ctx context.Context, wait time.Duration) (*ChannelLock, error) {
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
			return &ChannelLock{c}, nil
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

// Release lets the lock go.
func (l *ChannelLock) Release() {
	if l != nil {
		l.c.Close(context.Background())
	}
}

// Skip is a transaction (GTID or FILE:OFFSET) this channel's runs leave
// out (prepl.skip), and whether one has.
type Skip struct {
	Txn  string
	Done bool
}

// Skips lists this channel's skip requests.
func (t *Target) Skips(ctx context.Context) ([]Skip, error) {
	rows, err := t.Pool.Query(ctx, "SELECT txn, skipped_at IS NOT NULL FROM "+PositionSchema+".skip WHERE channel = $1 ORDER BY requested_at", t.Channel)
	if err != nil {
		return nil, fmt.Errorf("read %s.skip: %w", PositionSchema, err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Skip])
}

// MarkSkipped notes that a run skipped transaction id.
func (t *Target) MarkSkipped(ctx context.Context, id string) error {
	_, err := t.Pool.Exec(ctx, "UPDATE "+PositionSchema+".skip SET skipped_at = now() WHERE channel = $1 AND txn = $2", t.Channel, id)
	return err
}
