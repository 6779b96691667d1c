package run

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/prepl/prepl/internal/srcpos"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/snapshot"
	"github.com/prepl/prepl/store"
)

// Online follows a channel that prepl replicate applies into the target
// while prepl verify --online compares it (snapshot.Settler): the source's
// GTID position, and the channel's applied position read from the target
// (every slot's stored position merged).
type Online struct {
	Source  *sql.DB
	Target  store.Admin
	Channel string
	// Wait is how long WaitApplied waits for the target (0: a minute).
	Wait time.Duration

	mariadb *bool // the source's flavor, asked once
}

var _ snapshot.Settler = (*Online)(nil)

// SourcePosition reads the source's gtid_binlog_pos (MariaDB) or
// gtid_executed (MySQL).
func (o *Online) SourcePosition(ctx context.Context) (string, error) {
	if o.mariadb == nil {
		m, err := srcpos.IsMariaDB(ctx, o.Source)
		if err != nil {
			return "", err
		}
		o.mariadb = &m
	}
	return srcpos.GTIDs(ctx, o.Source, *o.mariadb)
}

// WaitApplied polls the channel's stored positions until they cover pos.
func (o *Online) WaitApplied(ctx context.Context, pos string) error {
	want, err := position.ParseSet(pos)
	if err != nil {
		return fmt.Errorf("the source's position %q: %w", pos, err)
	}
	wait := o.Wait
	if wait <= 0 {
		wait = time.Minute
	}
	deadline := time.Now().Add(wait)
	applied := ""
	for {
		have, err := o.applied(ctx)
		if err != nil {
			return err
		}
		if have.Covers(want) {
			return nil
		}
		applied = have.String()
		if time.Now().After(deadline) {
			return fmt.Errorf("verify --online: channel %q of the target has not applied the source's position %s within %s "+
				"(it stands at %q): is prepl replicate running on that channel (--channel), and does it apply everything the source writes? "+
				"Give it longer with --online-wait, or verify without --online once it has caught up", o.Channel, pos, wait, applied)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (o *Online) applied(ctx context.Context) (*position.Set, error) {
	cps, err := o.Target.Checkpoints(ctx)
	if err != nil {
		return nil, fmt.Errorf("read channel %q's position in the target: %w", o.Channel, err)
	}
	have := &position.Set{}
	for _, cp := range cps {
		if err := have.Merge(cp.GTIDPos); err != nil {
			return nil, fmt.Errorf("channel %q's stored position %q: %w", o.Channel, cp.GTIDPos, err)
		}
	}
	return have, nil
}
