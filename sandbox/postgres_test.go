package sandbox

import (
	"context"
	"testing"
)

func TestPostgresStartKillRestart(t *testing.T) {
	s := MustStartPostgres(t)
	db := MustOpenPostgres(t, s, "postgres")
	MustExec(t, db, "CREATE TABLE t (id int PRIMARY KEY, v text)", "INSERT INTO t VALUES (1, 'héllo 😀')")
	var enc, user string
	if err := db.QueryRow("SELECT pg_encoding_to_char(encoding), current_user FROM pg_database WHERE datname = 'postgres'").Scan(&enc, &user); err != nil {
		t.Fatal(err)
	}
	if enc != "UTF8" || user != "postgres" {
		t.Errorf("encoding %s user %s, want UTF8 postgres", enc, user)
	}
	db.Close()
	s.Kill()
	if s.Running() {
		t.Fatal("still running after Kill")
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	db2 := MustOpenPostgres(t, s, "postgres")
	var v string
	if err := db2.QueryRow("SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != "héllo 😀" {
		t.Fatalf("after restart: %q %v", v, err)
	}
	// Two instances side by side.
	s2 := MustStartPostgres(t)
	if s2.Port == s.Port || s2.Dir == s.Dir {
		t.Fatalf("second instance shares port or dir with the first")
	}
	MustExec(t, MustOpenPostgres(t, s2, "postgres"), "SELECT 1")
}
