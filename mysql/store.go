package mysql

import (
	"context"
	"fmt"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/store"
)

// A MySQL target is a channel store: its tables in PositionSchema hold the
// positions (position), the skip requests (skip) and the units that wrote
// non-transactional tables (maybe_applied); GET_LOCK holds the lock.
var _ store.Store = (*Target)(nil)

// ChannelName is the channel the target was opened for.
func (t *Target) ChannelName() string { return t.Channel }

// Channels lists the channels with a stored position, by name.
func (t *Target) Channels(ctx context.Context) ([]string, error) {
	rows, err := t.DB.QueryContext(ctx, "SELECT DISTINCT channel FROM "+PositionSchema+".position ORDER BY channel")
	if NoPositionTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ch string
		if err := rows.Scan(&ch); err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, rows.Err()
}

// ChannelPositions returns the stored positions of channel, by slot.
func (t *Target) ChannelPositions(ctx context.Context, channel string) (map[string]position.Checkpoint, error) {
	rows, err := t.DB.QueryContext(ctx, `SELECT `+positionColumns+` FROM `+PositionSchema+`.position WHERE channel = ?`, channel)
	if NoPositionTable(err) {
		return nil, nil // never written to (a target opened ReadOnly)
	}
	if err != nil {
		return nil, fmt.Errorf("read position: %w", err)
	}
	return scanPositions(rows)
}

// HalfApplied describes channel's marked unit, "" when none is marked.
func (t *Target) HalfApplied(ctx context.Context, channel string) (string, error) {
	c, err := t.DB.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	m, _, err := readMarker(ctx, c, channel)
	if err != nil || m.First == "" {
		return "", err
	}
	return m.Marker.describe(), nil
}

// describe says what became of k's unit, for prepl status and the end of
// a replay.
func (k Marker) describe() string {
	what := k.Transactions()
	if k.Failed != "" {
		return fmt.Sprintf("%s wrote non-transactional table(s) %s and the target refused them (%s): what ran before the refusal "+
			"stays; repair the rows, then tell the next run with --pending-ddl", what, k.Tables, k.Failed)
	}
	return fmt.Sprintf("%s wrote non-transactional table(s) %s and were interrupted: they may have taken effect in part; "+
		"the next run applies them again by key, or stops and asks", what, k.Tables)
}
