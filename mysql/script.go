package mysql

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"github.com/prepl/prepl/internal/sqllex"
	"github.com/prepl/prepl/txn"
)

// A dry run (prepl replay --dry-run --print-sql) prints what the target
// would be sent, from the code that sends it: a transaction's rows as
// the batch Render writes for a commit unit of that transaction alone,
// which Conn.Send sends; a DDL with the session and the default database
// that execDDL sets before it and the reset after it. Script writes them
// as a script for the mariadb or mysql client, which runs it in one
// session.

// ScriptNote follows the session a script begins with: what the script
// is, and where a run sends something else.
const ScriptNote = `-- The SQL prepl sends the target, rendered by the code that applies it,
-- each source transaction a commit unit of its own (as with --commit-unit 1).
-- A run may join several in one unit (one target transaction) and compact
-- a unit's changes to a table across them; it applies a unit again in
-- source order when a compacted statement surprises the target.
-- Left out: prepl's own writes (the position, stored with each commit and
-- around each DDL; the marker of a unit that writes non-transactional
-- tables; the disabling of a replicated event), and the rows an XA COMMIT
-- applies from prepl's store. A DDL runs on a connection of its own: here
-- the session is set back to prepl's after it. With --target, the table
-- definitions are the target's now, before any DDL printed here.
`

// Script writes transactions as the SQL the target would be sent.
type Script struct {
	t          *Target
	w          io.Writer
	compaction bool
	// format is the format description event the script's session has
	// read, as Conn.format.
	format []byte
	buf    bytes.Buffer
}

// NewOffline returns a Target without a server, which only renders (a
// dry run without a MySQL target): its catalog has only the definitions
// put in it (Catalog.Put), and it takes the flavor of the binlog it
// renders.
func NewOffline() *Target { return &Target{Catalog: NewCatalog(nil)} }

// NewScript starts a script on w with the session prepl's workers apply
// rows in (RowSession), then ScriptNote. compaction is the run's
// (apply.Config.NoCompact).
func (t *Target) NewScript(w io.Writer, compaction bool) (*Script, error) {
	_, err := io.WriteString(w, RowSession+";\n"+ScriptNote)
	return &Script{t: t, w: w, compaction: compaction}, err
}

// Txn writes what applying tx alone sends the target. With a server, the
// definitions are the target's, tx's rows fitted to them (Load) as the
// engine fits them; the DDL before tx in the stream has not run there.
func (s *Script) Txn(ctx context.Context, tx *txn.Txn) error {
	t := s.t
	if t.DB == nil && tx.Format != nil {
		t.IsMariaDB = tx.Format.Flavor == txn.MariaDB
	}
	s.buf.Reset()
	if err := s.txn(ctx, tx); err != nil {
		return err
	}
	_, err := s.w.Write(s.buf.Bytes())
	return err
}

func (s *Script) txn(ctx context.Context, tx *txn.Txn) error {
	t := s.t
	if tx.IsDDL() {
		return s.ddl(ctx, tx)
	}
	if t.DB != nil {
		if err := t.Load(ctx, tx); err != nil {
			return err
		}
	}
	b, err := t.Render(ctx, []*txn.Txn{tx}, s.compaction)
	if err != nil {
		return err
	}
	if e, ok := b.(*EachBatch); ok {
		for _, m := range e.members {
			s.batch(m)
		}
		return nil
	}
	s.batch(b.(*Batch))
	return nil
}

// ddl writes what execDDL sends, then the rows of a CREATE TABLE ...
// SELECT as applyDDLRows renders them.
func (s *Script) ddl(ctx context.Context, tx *txn.Txn) error {
	t := s.t
	st := tx.Changes[0].Stmt
	if err := ddlBeforeRun(tx, st); err != nil {
		return err
	}
	set, use := t.ddlSession(tx, t.keepGTID)
	s.stmt(set)
	if use != "" {
		if createsDatabase(st.SQL) {
			// A script cannot go on past an error as execDDL does.
			s.buf.WriteString("-- " + use + " (the database does not exist yet: prepl goes on past the error)\n")
		} else {
			s.stmt(use)
		}
	}
	s.stmt(st.SQL)
	s.stmt(DDLSessionReset)
	s.stmt(RowSession)
	if len(tx.Changes) == 1 {
		return nil
	}
	b, err := t.renderDDLRows(ctx, tx)
	if err != nil {
		return err
	}
	s.batch(b)
	return nil
}

// batch writes b's statements, then the COMMIT that Conn.Commit sends
// after the position.
func (s *Script) batch(b *Batch) {
	for _, c := range b.chunks {
		switch {
		case c.xa != nil:
			fmt.Fprintf(&s.buf, "-- XA %s %s: prepl reads the rows stored at its XA PREPARE in %s, applies them if it commits, and deletes them\n",
				c.xa.verb(), c.xa.xid, xaTable)
		case c.binlog != nil:
			if f := c.binlog.Format.Event; !bytes.Equal(f, s.format) {
				s.stmt("BINLOG '" + base64.StdEncoding.EncodeToString(f) + "'")
				s.format = f
			}
			for _, q := range c.each {
				s.stmt(q)
			}
		default:
			c.statements(func(q []byte, e rowExpect) {
				if e.check { // a row statement prepl wrote
					s.buf.Write(q)
					s.buf.WriteString(";\n")
				} else {
					s.stmt(string(q))
				}
			})
		}
	}
	s.stmt("COMMIT")
}

// stmt writes one statement for the client: where its text holds a
// semicolon (a routine's body), between DELIMITER lines; after a
// trailing line comment, on a line of its own.
func (s *Script) stmt(q string) {
	semicolon, lineComment := false, false
	for _, tk := range sqllex.Tokens(q) {
		semicolon = semicolon || tk.Kind == sqllex.Punct && tk.Text == ";"
		lineComment = tk.Kind == sqllex.Comment && !strings.HasPrefix(tk.Text, "/*")
	}
	end := ";"
	if lineComment {
		end = "\n;"
	}
	if semicolon {
		d := "$$"
		for strings.Contains(q, d) {
			d += "$"
		}
		fmt.Fprintf(&s.buf, "DELIMITER %s\n%s\n%s\nDELIMITER ;\n", d, q, d)
		return
	}
	s.buf.WriteString(q)
	s.buf.WriteString(end + "\n")
}

// createsDatabase reports whether stmt is a CREATE DATABASE (or SCHEMA).
func createsDatabase(stmt string) bool {
	toks := sqlTokens(stmt)
	i := 1
	if len(toks) > 2 && strings.EqualFold(toks[1], "OR") {
		i = 3 // CREATE OR REPLACE DATABASE
	}
	return len(toks) > i && strings.EqualFold(toks[0], "CREATE") &&
		(strings.EqualFold(toks[i], "DATABASE") || strings.EqualFold(toks[i], "SCHEMA"))
}
