package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/prepl/prepl/internal/sqllex"
)

// A replica's SQL thread creates the events it replicates as
// SLAVESIDE_DISABLED, so that an event runs only where it was created;
// applied by a client, CREATE EVENT and ALTER EVENT ... ENABLE make it
// ENABLED, and it would run on the target too (writing rows the source's
// run of it already sends). After such a DDL prepl marks the event on the
// target the replica's way.

// disableEvent marks the event a CREATE/ALTER EVENT statement names as
// DISABLE ON SLAVE (SLAVESIDE_DISABLED), as the replica leaves every event
// it replicates, enabled or not on the source. It runs whether the DDL ran
// now or before a crash.
func (t *Target) disableEvent(ctx context.Context, c *sql.Conn, stmt, defaultSchema string, keepGTID bool) error {
	schema, name, ok := eventOf(stmt)
	if !ok {
		return nil
	}
	if schema == "" {
		schema = defaultSchema
	}
	var status, definer string
	err := c.QueryRowContext(ctx, "SELECT STATUS, DEFINER FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ? AND EVENT_NAME = ?",
		schema, name).Scan(&status, &definer)
	if err == sql.ErrNoRows || status == "SLAVESIDE_DISABLED" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the status of event %s.%s: %w", schema, name, err)
	}
	// ALTER EVENT would make the current user its definer: keep the
	// source's ("user@host", split at the last @).
	user, host := definer, "%"
	if i := strings.LastIndexByte(definer, '@'); i >= 0 {
		user, host = definer[:i], definer[i+1:]
	}
	q := "ALTER DEFINER=" + QuoteString(user) + "@" + QuoteString(host) + " EVENT " + QuoteIdent(schema) + "." + QuoteIdent(name) + " DISABLE ON SLAVE"
	if keepGTID { // the target's binlog holds only the source's transactions
		q = "SET SESSION sql_log_bin=0; " + q + "; SET SESSION sql_log_bin=1"
	}
	if _, err := c.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("disable replicated event %s.%s on the target, as a replica does: %w", schema, name, err)
	}
	return nil
}

// eventOf returns the event a CREATE or ALTER EVENT statement leaves
// behind: [OR REPLACE] [DEFINER = ...] EVENT [IF NOT EXISTS] [schema.]name,
// or the new name of ALTER EVENT ... RENAME TO.
func eventOf(stmt string) (schema, name string, ok bool) {
	toks := sqlTokens(stmt)
	is := func(i int, w string) bool { return i < len(toks) && strings.EqualFold(toks[i], w) }
	if !is(0, "CREATE") && !is(0, "ALTER") {
		return "", "", false
	}
	i := 1
	for ; i < len(toks) && !is(i, "EVENT"); i++ {
		for _, other := range []string{"TABLE", "VIEW", "PROCEDURE", "FUNCTION", "TRIGGER", "DATABASE", "SCHEMA", "USER"} {
			if is(i, other) {
				return "", "", false
			}
		}
	}
	i++
	if is(i, "IF") && is(i+1, "NOT") && is(i+2, "EXISTS") {
		i += 3
	}
	schema, name, i = qualifiedAt(toks, i)
	if name == "" {
		return "", "", false
	}
	if is(0, "ALTER") {
		for j := i; j+2 < len(toks); j++ {
			if is(j, "RENAME") && is(j+1, "TO") {
				if s, n, _ := qualifiedAt(toks, j+2); n != "" {
					schema, name = s, n
				}
				break
			}
		}
	}
	return schema, name, true
}

// qualifiedAt reads name or schema.name at toks[i].
func qualifiedAt(toks []string, i int) (schema, name string, next int) {
	ident := func(k int) (string, bool) {
		if k >= len(toks) {
			return "", false
		}
		tk := toks[k]
		switch {
		case tk[0] == '`':
			return strings.ReplaceAll(strings.TrimSuffix(tk[1:], "`"), "``", "`"), true
		case isIdentByte(tk[0]):
			return tk, true
		}
		return "", false
	}
	a, ok := ident(i)
	if !ok {
		return "", "", i
	}
	if i+2 < len(toks) && toks[i+1] == "." {
		if b, ok := ident(i + 2); ok {
			return a, b, i + 3
		}
	}
	return "", a, i + 1
}

// sqlTokens splits a statement into words, quoted strings and identifiers
// (with their quotes) and single punctuation characters, dropping white
// space and comments. An executable comment (/*!50106 ... */) is dropped
// whole, body included, as scopeOf expects (TestScopeOf).
func sqlTokens(s string) []string {
	var out []string
	inExec := false
	for _, t := range sqllex.Tokens(s) {
		switch {
		case t.Kind == sqllex.ExecOpen || t.Kind == sqllex.ExecClose:
			inExec = t.Kind == sqllex.ExecOpen
		case t.Code() && !inExec:
			out = append(out, t.Text)
		}
	}
	return out
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
