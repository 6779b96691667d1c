package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// Conn is one pinned target connection, used by one worker at a time. It
// sends Batches (rendered ahead) and commits them with the position.
type Conn struct {
	t   *Target
	c   *pgx.Conn
	pid uint32
	// ids are the identity maxima of the batches sent in the open
	// transaction, which Commit moves the sequences to.
	ids []identityMax
	xa  *xaStep // the XA group sent, ended by Commit
}

// Conn opens a pinned connection with prepl's session settings.
func (t *Target) Conn(ctx context.Context) (apply.Conn, error) { return t.conn(ctx) }

func (t *Target) conn(ctx context.Context) (*Conn, error) {
	c, err := pgx.ConnectConfig(ctx, t.conf.Copy())
	if err != nil {
		return nil, t.connectErr(err)
	}
	return &Conn{t: t, c: c, pid: c.PgConn().PID()}, nil
}

// ID is the connection's backend pid.
func (c *Conn) ID() uint64 { return uint64(c.pid) }

// Close ends the connection (never reused half-way through a transaction).
func (c *Conn) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c.c.Close(ctx)
}

// Send opens a target transaction with b's statements, one round trip per
// chunk, and checks every row statement's row count. The transaction
// stays open for Commit or Rollback.
func (c *Conn) Send(ctx context.Context, ab apply.Batch) error {
	b := ab.(*Batch)
	c.xa = b.xa
	if b.xa != nil && b.xa.kind == txn.XAPrepare {
		// An earlier attempt may have prepared it and lost its position.
		prepared, err := c.isPrepared(ctx, b.xa.gid)
		if err != nil {
			return err
		}
		if c.xa.prepared = prepared; prepared {
			return nil
		}
	}
	for _, ch := range b.chunks {
		if err := c.exec(ctx, ch); err != nil {
			return err
		}
	}
	for _, id := range b.ids {
		c.ids = noteMax(c.ids, id)
	}
	return nil
}

// exec runs a chunk's statements as one simple query and checks each
// statement's result against its expectation.
func (c *Conn) exec(ctx context.Context, ch chunk) error {
	if ch.copy != nil {
		tag, err := c.c.PgConn().CopyFrom(ctx, bytes.NewReader(ch.copy), string(ch.sql))
		if err != nil {
			return ch.expect[0].failed(err)
		}
		return ch.expect[0].check(&pgconn.Result{CommandTag: tag})
	}
	results, err := c.c.PgConn().Exec(ctx, string(ch.sql)).ReadAll()
	if err != nil {
		// The results before the failed statement; a statement that
		// returns rows may be among them, holding its error.
		i := len(results)
		if i > 0 && results[i-1].Err != nil {
			i--
		}
		if i < len(ch.expect) {
			return ch.expect[i].failed(err)
		}
		return err
	}
	for i, e := range ch.expect {
		if i < len(results) {
			if err := e.check(results[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Commit stores p in the position table and commits the transaction Send
// opened; the rows were checked before, so a surprise never follows.
func (c *Conn) Commit(ctx context.Context, p position.Checkpoint) error {
	ids, xa := c.ids, c.xa
	c.ids, c.xa = nil, nil
	if xa != nil {
		return c.commitXA(ctx, xa, ids, p)
	}
	q, err := c.t.identitySQL(ctx, c.c, ids)
	if err != nil {
		return err
	}
	if q != "" {
		q += ";"
	}
	results, err := c.c.PgConn().Exec(ctx, q+c.t.positionSQL(p)+";COMMIT").ReadAll()
	if err != nil {
		return fmt.Errorf("store the position and commit: %w", err)
	}
	if n := len(results); n == 0 || results[n-1].CommandTag.String() != "COMMIT" {
		return errors.New("commit: the target rolled the transaction back")
	}
	c.t.identitySet(ids)
	return nil
}

// Rollback abandons the open transaction.
func (c *Conn) Rollback(ctx context.Context) error {
	c.ids, c.xa = nil, nil
	_, err := c.c.Exec(ctx, "ROLLBACK")
	return err
}
