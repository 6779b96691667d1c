package main

import (
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestReplayAndReplicateIntoPostgres is the PostgreSQL target through
// the CLI: replay of a binlog from its start (the tables created by its
// DDL), and copy then replicate, each checked by verify.
func TestReplayAndReplicateIntoPostgres(t *testing.T) {
	src := source(t, func(o *sandbox.Options) { o.BinlogRowMetadata = "FULL" })
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, typesWorkload...)
	pg := sandbox.MustStartPostgres(t)
	pdb := sandbox.MustOpenPostgres(t, pg, "postgres")
	sandbox.MustExec(t, pdb, "CREATE DATABASE replayed", "CREATE DATABASE replicated")

	files := binlogFiles(t, src)
	replayed := pg.URL("replayed")
	mustPrepl(t, append([]string{"replay", "--target", replayed, "--mode", "writeset", "--workers", "4", "--zero-dates", "null",
		"--progress", "0"}, files...)...)
	if out := mustPrepl(t, "verify", "--source", src.URL(), "--target", replayed, "--zero-dates", "null"); !strings.Contains(out, "equal") {
		t.Fatalf("verify after replay: %s", out)
	}

	replicated := pg.URL("replicated")
	mustPrepl(t, "copy", "--source", src.URL(), "--target", replicated, "--zero-dates", "null", "--progress=false")
	sandbox.MustExec(t, db,
		"UPDATE ty.t SET vc = 'after copy', tu = tu + 1 WHERE id = 1",
		"ALTER TABLE ty.t ADD COLUMN extra INT UNSIGNED NOT NULL DEFAULT 4294967295 AFTER id",
		"INSERT INTO ty.t (id, vc) VALUES (10, 'new')",
		"DELETE FROM ty.t WHERE id = 4")
	mustPrepl(t, "replicate", "--source", src.URL(), "--target", replicated, "--zero-dates", "null", "--stop-at-end", "--progress", "0")
	if out := mustPrepl(t, "verify", "--source", src.URL(), "--target", replicated, "--zero-dates", "null"); !strings.Contains(out, "equal") {
		t.Fatalf("verify after replicate: %s", out)
	}
	if code, out := prepl(t, "status", "--target", replicated, "--channel", "default"); !strings.Contains(out, `channel "default" slot "main": applied`) {
		t.Fatalf("status of the PostgreSQL target: exit %d\n%s", code, out)
	}
	if code, out := prepl(t, "replicate", "--source", src.URL(), "--target", replicated, "--keep-gtid"); code != 2 || !strings.Contains(out, "no GTIDs") {
		t.Fatalf("--keep-gtid with a PostgreSQL target: exit %d, want 2 saying why\n%s", code, out)
	}
}
