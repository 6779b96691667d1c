package main

import (
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestReplayAndReplicateIntoPostgres is the PostgreSQL target through
// the CLI: replay of a binlog from its start (the tables created by its
// DDL), and copy then replicate, past a DDL it stops at with
// --skip-gtid, each checked by verify.
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
	// A DDL PostgreSQL has no translation for stops replicate before it,
	// exit 2, naming its GTID; --skip-gtid goes past it.
	sandbox.MustExec(t, db, "CREATE TRIGGER ty.t_bi BEFORE INSERT ON ty.t FOR EACH ROW SET NEW.tu = 7")
	var trigger string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&trigger); err != nil {
		t.Fatal(err)
	}
	sandbox.MustExec(t, db, "INSERT INTO ty.t (id, vc) VALUES (11, 'after the trigger')")
	code, out := prepl(t, "replicate", "--source", src.URL(), "--target", replicated, "--zero-dates", "null", "--stop-at-end", "--progress", "0")
	if code != 2 || !strings.Contains(out, "--skip-gtid "+trigger) {
		t.Fatalf("replicate up to a CREATE TRIGGER: exit %d, want 2 naming --skip-gtid %s\n%s", code, trigger, out)
	}
	// prepl skip records it in the PostgreSQL target, as in a MySQL one.
	if out := mustPrepl(t, "skip", "--target", replicated, "--gtid", trigger); !strings.Contains(out, "will be skipped by the next run") {
		t.Fatalf("prepl skip on a PostgreSQL target:\n%s", out)
	}
	if out := mustPrepl(t, "replicate", "--source", src.URL(), "--target", replicated, "--zero-dates", "null", "--stop-at-end",
		"--progress", "0"); !strings.Contains(out, "skipped 1") {
		t.Fatalf("replicate after prepl skip: want the trigger skipped\n%s", out)
	}
	if out := mustPrepl(t, "verify", "--source", src.URL(), "--target", replicated, "--zero-dates", "null"); !strings.Contains(out, "equal") {
		t.Fatalf("verify after skipping the trigger: %s", out)
	}
	if code, out := prepl(t, "status", "--target", replicated, "--channel", "default"); !strings.Contains(out, `channel "default" slot "main": applied`) {
		t.Fatalf("status of the PostgreSQL target: exit %d\n%s", code, out)
	}
	if code, out := prepl(t, "replicate", "--source", src.URL(), "--target", replicated, "--stop-at-end"); code != 2 || !strings.Contains(out, "--zero-dates=null") {
		t.Fatalf("replicate with other mapping options than the copy's: exit %d, want 2 naming the copy's\n%s", code, out)
	}
	if code, out := prepl(t, "replicate", "--source", src.URL(), "--target", replicated, "--keep-gtid"); code != 2 || !strings.Contains(out, "no GTIDs") {
		t.Fatalf("--keep-gtid with a PostgreSQL target: exit %d, want 2 saying why\n%s", code, out)
	}
	// prepl reset: the channel's positions and skips go; it starts where told.
	mustPrepl(t, "reset", "--target", replicated, "--start-gtid", trigger, "--yes")
	rdb := sandbox.MustOpenPostgres(t, pg, "replicated")
	var pos string
	var skips int
	if err := rdb.QueryRow("SELECT gtid_pos FROM prepl.position WHERE channel = 'default'").Scan(&pos); err != nil || pos != trigger {
		t.Fatalf("position after reset: %q %v, want only %s", pos, err, trigger)
	}
	if err := rdb.QueryRow("SELECT count(*) FROM prepl.skip WHERE channel = 'default'").Scan(&skips); err != nil || skips != 0 {
		t.Fatalf("skip requests after reset: %d %v, want none", skips, err)
	}
}
