package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/position"
)

// Conn is one pinned target connection, used by one worker at a time. It
// sends Batches (rendered ahead) and commits them with the position.
type Conn struct {
	t   *Target
	c   *pgx.Conn
	pid uint32
	// ids is the identitySQL of the batches sent in the open
	// transaction, run by Commit.
	ids []string
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
	for _, ch := range b.chunks {
		if err := c.exec(ctx, ch); err != nil {
			return err
		}
	}
	if q := b.identitySQL(); q != "" {
		c.ids = append(c.ids, q)
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
	q := strings.Join(append(c.ids, c.t.positionSQL(p), "COMMIT"), ";")
	c.ids = c.ids[:0]
	results, err := c.c.PgConn().Exec(ctx, q).ReadAll()
	if err != nil {
		return fmt.Errorf("store the position and commit: %w", err)
	}
	if n := len(results); n == 0 || results[n-1].CommandTag.String() != "COMMIT" {
		return errors.New("commit: the target rolled the transaction back")
	}
	return nil
}

// Rollback abandons the open transaction.
func (c *Conn) Rollback(ctx context.Context) error {
	c.ids = c.ids[:0]
	_, err := c.c.Exec(ctx, "ROLLBACK")
	return err
}
