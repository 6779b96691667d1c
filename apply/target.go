package apply

import (
	"context"
	"errors"

	"github.com/prepl/prepl/fault"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/txn"
)

// Target is where the engine applies transactions; package mysql
// implements it for MySQL and MariaDB. Options that change how units are
// written (keeping source GTIDs) are fixed when the target is opened.
type Target interface {
	// Conn opens a pinned connection for one worker.
	Conn(ctx context.Context) (Conn, error)
	// Tables is the catalog the dependency tracker reads definitions
	// from; Load puts t's tables in it.
	Tables() txn.Catalog
	Load(ctx context.Context, t *txn.Txn) error
	// Render writes a unit's members (in order) as a batch any Conn can
	// send: with compaction, their net effect where it is safe; a
	// compacted statement that surprises the target fails Send with
	// ErrCompacted, and the unit is rendered again without. CPU only.
	Render(ctx context.Context, txs []*txn.Txn, compaction bool) (Batch, error)
	// ApplyDDL runs a DDL transaction exactly once across crashes, storing
	// before (marked pending) and after around it; resolve is the user's
	// word on a DDL a crash interrupted (DDLApplied, DDLNotApplied). It
	// reports whether it ran the DDL.
	ApplyDDL(ctx context.Context, tx *txn.Txn, before, after position.Checkpoint, resolve string) (ran bool, err error)
	// Checkpoints returns the stored checkpoints of this stream, by slot.
	Checkpoints(ctx context.Context) (map[string]position.Checkpoint, error)
	// Retry runs f until it succeeds or fails with an error other than a
	// lost connection, for as long as the target allows.
	Retry(ctx context.Context, what string, f func() error) error
	// Classify tells how the engine treats an error of the target.
	Classify(err error) Class
	// LockWaits lists the connections that wait for a lock another one
	// holds, Blocker 0 when the target does not name the holder;
	// ErrNoLockWaits when the target cannot tell.
	LockWaits(ctx context.Context) ([]ConnWait, error)
	// Kill interrupts the statement connection id runs.
	Kill(ctx context.Context, id uint64) error
	// MaybeApplied returns the first transaction of this stream's unit
	// that wrote non-transactional tables and was interrupted (the target
	// marked it before it began), "" when none is marked: --pending-ddl
	// may name it as it names a pending DDL. A target whose tables are
	// all transactional marks none and returns "".
	MaybeApplied(ctx context.Context) (string, error)
	// KeepsGTIDs reports whether each unit is written as one target
	// transaction carrying its source GTID: units then hold one member.
	KeepsGTIDs() bool
	// UnitLimits are the target's own limits on a transaction (a Galera
	// cluster's write-set limits): the engine keeps each commit unit
	// under rows source row changes and bytes; 0, 0 for a target with
	// none (a single server).
	UnitLimits() (rows, bytes int)
	// String names the target in messages.
	String() string
}

// Conn is one pinned target connection, used by one worker.
type Conn interface {
	ID() uint64
	// Send opens a target transaction with b's statements and checks
	// their row counts; it stays open for Commit or Rollback.
	Send(ctx context.Context, b Batch) error
	// Commit stores p in the same transaction and commits it.
	Commit(ctx context.Context, p position.Checkpoint) error
	Rollback(ctx context.Context) error
	Close()
}

// Batch is a rendered unit.
type Batch interface {
	// Saved counts the source row changes compaction made unnecessary.
	Saved() int
	// RowEvents counts the source row changes it sends as rows events
	// (MariaDB's BINLOG statement) rather than as SQL.
	RowEvents() int
}

// ConnWait: connection Requester waits for a lock that Blocker holds (0:
// a holder the target does not name).
type ConnWait struct{ Requester, Blocker uint64 }

// Class is how the engine treats a target error (see sequencer.Class).
type Class = sequencer.Class

// Classes of target errors.
const (
	Fatal      = sequencer.Fatal      // stop: the target diverged or refuses
	Refused    = sequencer.Refused    // a statement refused by the server (a Fatal the engine can pin on a member)
	Retry      = sequencer.Retry      // deadlock, lock wait timeout: roll back, retry
	Connection = sequencer.Connection // the connection broke: reconnect, retry
)

// Errors a Target wraps.
var (
	// ErrRowCount: an UPDATE or DELETE did not find its row, or an INSERT
	// did not insert one: the target has diverged from the source (fatal,
	// package fault: someone must repair it, or skip).
	ErrRowCount = fault.Fatal(errors.New("row count mismatch"))
	// ErrCompacted: a compacted statement did not do what the unit's row
	// images promised; the unit is applied again in source order.
	ErrCompacted = errors.New("compacted statement mismatch")
	// ErrNoLockWaits: the target cannot list lock waits (MySQL 8 has no
	// INNODB_LOCK_WAITS); lock wait timeouts and retries do instead.
	ErrNoLockWaits = errors.New("the target does not report lock waits")
)

// Resolutions of a pending DDL, the user's word on it (--pending-ddl).
const (
	DDLApplied    = "applied"
	DDLNotApplied = "not-applied"
)
