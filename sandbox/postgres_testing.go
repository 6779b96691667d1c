package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx" for OpenPostgres
)

// MustStartPostgres starts a PostgreSQL instance for a test and closes it
// when the test ends; without PostgreSQL installed the test is skipped.
func MustStartPostgres(tb testing.TB, flags ...string) *PGServer {
	tb.Helper()
	s, err := StartPostgres(context.Background(), flags...)
	if errors.Is(err, ErrNoPostgres) {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatalf("start postgres sandbox: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Open returns a *sql.DB (driver pgx) on database db.
func (s *PGServer) Open(db string) (*sql.DB, error) { return sql.Open("pgx", s.URL(db)) }

// MustOpenPostgres opens database db on s and closes it when the test ends.
func MustOpenPostgres(tb testing.TB, s *PGServer, db string) *sql.DB {
	tb.Helper()
	d, err := s.Open(db)
	if err != nil {
		tb.Fatalf("open %s: %v", s.Addr(), err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}
