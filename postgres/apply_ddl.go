package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/fault"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// ErrRefusedDDL is wrapped when a DDL statement has no PostgreSQL
// translation: the run stops before it (fatal, package fault: the user
// skips it, or changes the source).
var ErrRefusedDDL = fault.Fatal(errors.New("DDL not applied to PostgreSQL"))

// ApplyDDL runs a DDL transaction exactly once across crashes. PostgreSQL
// DDL is transactional, so one target transaction holds the translated
// statements, the catalog rows they change (prepl.tables), the rows the
// DDL's transaction wrote (CREATE TABLE ... SELECT) and the position
// after it: a crash leaves all of it or none, and resolve (the MySQL
// target's pending-DDL answer) is never needed.
func (t *Target) ApplyDDL(ctx context.Context, tx *txn.Txn, before, after position.Checkpoint, resolve string) (bool, error) {
	st := tx.Changes[0].Stmt
	if done, err := t.committed(ctx, after); err != nil || done {
		return false, err
	}
	// A DDL may restart, drop or rename what the identity cache knows;
	// it is alone in flight (the DDL barrier).
	t.ids.forget()
	defer t.ids.forget()
	old := t.Catalog.Defs()
	next := old.Clone()
	o := t.Opts
	if st.UnixMicro > 0 {
		o.Now, o.NowZone = time.UnixMicro(st.UnixMicro), sessionZone(st.TimeZone)
	}
	o.AutoIncIncrement = int(st.AutoIncrementIncrement)
	stmts, err := TranslateDefs(st.SQL, st.Schema, o, next)
	if err != nil {
		return false, fmt.Errorf("%w: %s: %w. Nothing of it is applied and the run stops before it: apply its "+
			"equivalent on the target by hand if it matters there, then run again with --skip-gtid %s to go past it",
			ErrRefusedDDL, describe(tx), err, skipArg(tx))
	}
	c, err := t.conn(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	pt, err := c.c.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer pt.Rollback(context.Background())
	for _, q := range stmts {
		if _, err := pt.Exec(ctx, q); err != nil {
			return false, fmt.Errorf("DDL %s failed on the target: %s: %w", describe(tx), short(q), err)
		}
	}
	if err := storeChanged(ctx, pt, old, next, st.SQL); err != nil {
		return false, fmt.Errorf("DDL %s: %w", describe(tx), err)
	}
	if len(tx.Changes) > 1 { // CREATE TABLE ... SELECT: its rows, with the new definitions
		rows := *tx
		rows.Changes = tx.Changes[1:]
		cat := newCatalog(next)
		if err := cat.LoadTxn(&rows); err != nil {
			return false, fmt.Errorf("rows of DDL %s: %w", describe(tx), err)
		}
		b := &Batch{}
		p := compact.UnitPlan{Runs: []compact.Run{{Txs: []*txn.Txn{&rows}}}}
		if err := t.renderRuns(b, cat, p); err != nil {
			return false, err
		}
		if err := c.Send(ctx, b); err != nil {
			return false, fmt.Errorf("rows of DDL %s: %w", describe(tx), err)
		}
		q, err := t.identitySQL(ctx, c.c, b.ids)
		if err == nil && q != "" {
			_, err = pt.Exec(ctx, q)
		}
		if err != nil {
			return false, fmt.Errorf("rows of DDL %s: %w", describe(tx), err)
		}
	}
	if _, err := pt.Exec(ctx, t.positionSQL(after)); err != nil {
		return false, fmt.Errorf("store position after DDL %s: %w", describe(tx), err)
	}
	if err := pt.Commit(ctx); err != nil {
		return false, fmt.Errorf("commit DDL %s: %w", describe(tx), err)
	}
	t.Catalog.install(next)
	return true, nil
}

// skipArg is how --skip-gtid (or, without a GTID, --skip-position) names tx.
func skipArg(tx *txn.Txn) string {
	if tx.GTID != "" {
		return tx.GTID
	}
	return tx.Start.String() + " (no GTID: --skip-position " + tx.Start.String() + " with prepl replay)"
}

// committed tells whether an earlier attempt of the DDL committed (its
// answer was lost with the connection): the position already is after.
// The catalog is read again then, as that attempt left it.
func (t *Target) committed(ctx context.Context, after position.Checkpoint) (bool, error) {
	ps, err := t.Checkpoints(ctx)
	if err != nil {
		return false, err
	}
	p := ps[after.Slot]
	if p.Applied != after.Applied || p.File != after.File || p.Pos != after.Pos {
		return false, nil
	}
	defs, err := loadDefs(ctx, t.Pool)
	if err != nil {
		return false, err
	}
	t.Catalog.install(defs)
	return true, nil
}

// sessionZone is the source session's time_zone as a location: an offset
// (+01:00) or a name; SYSTEM, the source host's zone, which the binlog
// does not say, is taken as UTC, prepl's session zone on PostgreSQL.
func sessionZone(tz string) *time.Location {
	if tz == "" || strings.EqualFold(tz, "SYSTEM") {
		return time.UTC
	}
	if t, err := time.Parse("-07:00", tz); err == nil {
		_, off := t.Zone()
		return time.FixedZone(tz, off)
	}
	if loc, err := time.LoadLocation(tz); err == nil {
		return loc
	}
	return time.UTC
}
