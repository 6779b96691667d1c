package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/store"
)

// skipTableSQL holds the transactions `prepl skip` asked a channel's next
// run to leave out, as MariaDB's sql_slave_skip_counter does for one
// transaction: each is named by GTID or by FILE:OFFSET of its start.
const skipTableSQL = `CREATE TABLE IF NOT EXISTS ` + PositionSchema + `.skip (
			channel VARCHAR(64) NOT NULL,
			txn VARCHAR(600) NOT NULL,
			requested_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
			skipped_at TIMESTAMP(6) NULL,
			PRIMARY KEY (channel, txn)
		) ENGINE=InnoDB COMMENT='prepl skip: transactions to leave out, by GTID or FILE:OFFSET'`

// AddSkip records that this channel's runs skip transaction id.
func (t *Target) AddSkip(ctx context.Context, id string) error {
	if err := t.createTable(ctx, skipTableSQL); err != nil {
		return err
	}
	_, err := t.DB.ExecContext(ctx, "INSERT INTO "+PositionSchema+".skip (channel, txn) VALUES (?, ?) "+
		"ON DUPLICATE KEY UPDATE requested_at = CURRENT_TIMESTAMP(6), skipped_at = NULL", t.Channel, id)
	return err
}

// Skips lists this channel's skip requests, oldest first.
func (t *Target) Skips(ctx context.Context) ([]store.Skip, error) {
	rows, err := t.DB.QueryContext(ctx, "SELECT txn, skipped_at IS NOT NULL FROM "+PositionSchema+".skip WHERE channel = ? ORDER BY requested_at", t.Channel)
	if NoPositionTable(err) {
		return nil, nil // no skip was ever asked for on this target
	}
	if err != nil {
		return nil, fmt.Errorf("read %s.skip: %w", PositionSchema, err)
	}
	defer rows.Close()
	var out []store.Skip
	for rows.Next() {
		var s store.Skip
		if err := rows.Scan(&s.Txn, &s.Done); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// MarkSkipped notes that a run skipped transaction id.
func (t *Target) MarkSkipped(ctx context.Context, id string) error {
	_, err := t.DB.ExecContext(ctx, "UPDATE "+PositionSchema+".skip SET skipped_at = CURRENT_TIMESTAMP(6) WHERE channel = ? AND txn = ?", t.Channel, id)
	return err
}

// ResetSkips deletes this channel's skip requests.
func (t *Target) ResetSkips(ctx context.Context) error {
	_, err := t.DB.ExecContext(ctx, "DELETE FROM "+PositionSchema+".skip WHERE channel = ?", t.Channel)
	if NoPositionTable(err) {
		return nil
	}
	return err
}

// StorePosition writes p as a stored position of this channel (outside
// any transaction of rows: for prepl reset).
func (t *Target) StorePosition(ctx context.Context, p position.Checkpoint) error {
	_, err := t.DB.ExecContext(ctx, t.positionSQL(p))
	return err
}

// LockChannel takes the channel's lock, waiting up to wait for a prepl
// that just went away to release it. The lock is GET_LOCK's named lock,
// held by a connection of its own: it lives in the target's server, so it
// goes when that connection goes, as prepl does. `prepl skip` and `prepl
// reset` refuse to change a channel whose lock is held.
func (t *Target) LockChannel(ctx context.Context, wait time.Duration) (release func(), err error) {
	c, err := t.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to target %s: %w", t.Endpoint, err)
	}
	var got sql.NullInt64
	if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", LockName(t.Channel), int(wait.Seconds())).Scan(&got); err != nil {
		c.Close()
		return nil, fmt.Errorf("take the channel lock on target %s: %w", t.Endpoint, err)
	}
	if got.Int64 != 1 {
		holder := t.ChannelHolder(ctx)
		c.Close()
		return nil, fmt.Errorf("another prepl runs on channel %q of target %s (it holds the lock %q%s): stop it first, "+
			"or give this one another --channel", t.Channel, t.Endpoint, LockName(t.Channel), holder)
	}
	return sync.OnceFunc(func() { discard(c) }), nil // discarding the connection releases its locks
}

// ChannelHolder describes who holds the channel's lock ("" when free).
func (t *Target) ChannelHolder(ctx context.Context) string {
	var id sql.NullInt64
	t.DB.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", LockName(t.Channel)).Scan(&id)
	if !id.Valid {
		return ""
	}
	var host sql.NullString
	t.DB.QueryRowContext(ctx, "SELECT host FROM information_schema.processlist WHERE id = ?", id.Int64).Scan(&host)
	return fmt.Sprintf(", connection %d from %s", id.Int64, host.String)
}
