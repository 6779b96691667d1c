package sandbox

import (
	"context"
	"database/sql"
	"testing"
)

// MustStart starts an instance for a test and closes it when the test ends.
func MustStart(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := Start(context.Background(), opts)
	if err != nil {
		tb.Fatalf("start sandbox: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// MustOpen opens database db on s and closes it when the test ends.
func MustOpen(tb testing.TB, s *Server, db string) *sql.DB {
	tb.Helper()
	d, err := s.Open(db)
	if err != nil {
		tb.Fatalf("open %s: %v", s.Addr(), err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// MustExec runs statements on db, failing the test on the first error.
func MustExec(tb testing.TB, db *sql.DB, stmts ...string) {
	tb.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("exec %q: %v", q, err)
		}
	}
}
