package mysql

import (
	"context"
	"fmt"
	"strconv"

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

// Kill interrupts the statement connection id runs (KILL QUERY).
func (t *Target) Kill(ctx context.Context, id uint64) error {
	_, err := t.DB.ExecContext(ctx, "KILL QUERY "+strconv.FormatUint(id, 10))
	return err
}

// String names the target's endpoint.
func (t *Target) String() string { return t.Endpoint.String() }
