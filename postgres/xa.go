package postgres

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// XA. A transaction prepared with XA on the source is two binlog groups,
// with other transactions between them: the prepared part (its rows,
// ending with XA PREPARE xid) and, later, XA COMMIT xid or XA ROLLBACK xid.
// PostgreSQL has the same two phases, so each group maps to its own:
//
//   - the prepared part's rows go in a target transaction that ends with
//     PREPARE TRANSACTION gid (gid: prepl, the channel and a hash of the
//     xid): its rows are invisible and its row locks held until the
//     commit, as on the source, and it survives a crash of PostgreSQL;
//   - XA COMMIT is COMMIT PREPARED gid, XA ROLLBACK is ROLLBACK PREPARED;
//   - MySQL's one-phase XA group is an ordinary transaction.
//
// Neither phase can hold the position row: a prepared transaction would
// lock it until its commit, which later transactions wait for, and COMMIT
// PREPARED runs outside any transaction. So the position moves in a
// transaction of its own right after each phase, which also records the
// prepared gid in prepl.xa (and deletes it after the commit). A crash
// between the two is told apart on the next attempt by PostgreSQL's own
// record, pg_prepared_xacts: a gid already prepared is not prepared
// again, and an XA COMMIT whose gid is gone but still in prepl.xa had
// committed. Prepared transactions need max_prepared_transactions > 0 on
// the target (a server restart to change).

// ErrXAUnprepared is wrapped when an XA COMMIT comes whose XA PREPARE was
// not applied to this target.
var ErrXAUnprepared = errors.New("XA COMMIT of a transaction whose XA PREPARE was not applied")

// xaSQL creates the table of the gids prepared and not yet committed.
const xaSQL = `CREATE TABLE IF NOT EXISTS ` + PositionSchema + `.xa (
		channel varchar(64) NOT NULL,
		gid varchar(200) NOT NULL,
		xid text NOT NULL,
		gtid varchar(128) NOT NULL,
		prepared_at timestamptz(6) NOT NULL DEFAULT now(),
		PRIMARY KEY (channel, gid))`

// xaStep is what a batch of an XA group does at Commit.
type xaStep struct {
	kind     txn.XAKind // XAPrepare, XACommit or XARollback
	gid, xid string
	tx       *txn.Txn
	prepared bool // XAPrepare: an earlier attempt prepared it already
}

// gid names the prepared transaction of xid on the target.
func (t *Target) gid(xid string) string {
	return fmt.Sprintf("prepl:%s:%x", t.Channel, sha256.Sum256([]byte(xid)))
}

// renderXA writes an XA group, the only member of its unit.
func (t *Target) renderXA(ctx context.Context, tx *txn.Txn) (*Batch, error) {
	kind, xid := tx.XAGroup()
	if kind == txn.XANone {
		return nil, fmt.Errorf("apply %s: an XA transaction prepl cannot read: %w", describe(tx), ErrUnsupported)
	}
	b := &Batch{}
	if kind == txn.XACommit || kind == txn.XARollback {
		b.xa = &xaStep{kind: kind, gid: t.gid(xid), xid: xid, tx: tx}
		return b, nil
	}
	if kind == txn.XAPrepare && t.maxPrepared == 0 {
		return nil, fmt.Errorf("apply %s: XA PREPARE %s: the target's max_prepared_transactions is 0, so PostgreSQL cannot hold a "+
			"transaction prepared on the source until its XA COMMIT: set max_prepared_transactions (above the number of XA "+
			"transactions the source keeps prepared at once; a server restart) and run again (%w)", describe(tx), xid, ErrUnsupported)
	}
	rows, other := tx.XARows()
	if other != nil {
		return nil, fmt.Errorf("apply %s: XA transaction %s holds the statement %q, which PostgreSQL cannot run with its rows (%w)",
			describe(tx), xid, short(other.SQL), ErrNotTranslated)
	}
	p, err := compact.PlanUnit([]*txn.Txn{rows}, nil, t.Lookup(ctx), false)
	if err != nil {
		return nil, err
	}
	b.add([]byte("BEGIN"), expect{})
	if err := t.renderRuns(b, t.Catalog, p); err != nil {
		return nil, err
	}
	if kind == txn.XAPrepare {
		b.xa = &xaStep{kind: kind, gid: t.gid(xid), xid: xid, tx: tx}
	}
	return b, nil
}

// isPrepared tells whether gid is a prepared transaction of this database.
func (c *Conn) isPrepared(ctx context.Context, gid string) (bool, error) {
	var ok bool
	err := c.c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_prepared_xacts WHERE gid = $1 AND database = current_database())", gid).Scan(&ok)
	return ok, err
}

// commitXA ends an XA group's batch: PREPARE TRANSACTION, or COMMIT or
// ROLLBACK PREPARED, then the position (and prepl.xa) in a transaction
// of their own.
func (c *Conn) commitXA(ctx context.Context, s *xaStep, ids []identityMax, p position.Checkpoint) error {
	t := c.t
	var record string
	switch s.kind {
	case txn.XAPrepare:
		if !s.prepared {
			q, err := t.identitySQL(ctx, c.c, ids)
			if err != nil {
				return err
			}
			if q != "" {
				q += ";"
			}
			results, err := c.c.PgConn().Exec(ctx, q+"PREPARE TRANSACTION "+QuoteString(s.gid)).ReadAll()
			if err != nil {
				return fmt.Errorf("apply %s: XA PREPARE %s: %w", describe(s.tx), s.xid, err)
			}
			if n := len(results); n == 0 || results[n-1].CommandTag.String() != "PREPARE TRANSACTION" {
				return fmt.Errorf("apply %s: XA PREPARE %s: the target rolled the transaction back", describe(s.tx), s.xid)
			}
			t.identitySet(ids)
		}
		record = fmt.Sprintf("INSERT INTO %s.xa (channel, gid, xid, gtid) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING;",
			PositionSchema, QuoteString(t.Channel), QuoteString(s.gid), QuoteString(s.xid), QuoteString(s.tx.GTID))
	default:
		prepared, err := c.isPrepared(ctx, s.gid)
		if err != nil {
			return err
		}
		verb := map[txn.XAKind]string{txn.XACommit: "COMMIT", txn.XARollback: "ROLLBACK"}[s.kind]
		if prepared {
			if _, err := c.c.Exec(ctx, verb+" PREPARED "+QuoteString(s.gid)); err != nil {
				return fmt.Errorf("apply %s: XA %s %s: %w", describe(s.tx), verb, s.xid, err)
			}
		} else if s.kind == txn.XACommit {
			// Gone: committed by an attempt whose position was lost
			// (prepl.xa still has it), or never prepared here.
			var known bool
			if err := c.c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+PositionSchema+".xa WHERE channel = $1 AND gid = $2)",
				t.Channel, s.gid).Scan(&known); err != nil {
				return err
			}
			if !known {
				return fmt.Errorf("apply %s: XA COMMIT %s: prepl has not applied this XA transaction's XA PREPARE on this target "+
					"(channel %q), so it does not have its rows: the replay or stream started after it. Start again from a "+
					"position before its XA PREPARE (or, if the XA PREPARE was skipped on purpose, skip this XA COMMIT too with "+
					"--skip-gtid %s) (%w; %w)", describe(s.tx), s.xid, t.Channel, skipArg(s.tx), ErrXAUnprepared, ErrUnsupported)
			}
		}
		record = fmt.Sprintf("DELETE FROM %s.xa WHERE channel = %s AND gid = %s;", PositionSchema, QuoteString(t.Channel), QuoteString(s.gid))
	}
	results, err := c.c.PgConn().Exec(ctx, "BEGIN;"+record+t.positionSQL(p)+";COMMIT").ReadAll()
	if err != nil {
		return fmt.Errorf("store the position after XA %s: %w", s.xid, err)
	}
	if n := len(results); n == 0 || results[n-1].CommandTag.String() != "COMMIT" {
		return errors.New("commit: the target rolled the transaction back")
	}
	return nil
}
