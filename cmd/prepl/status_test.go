package main

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// statusCheck runs prepl status and returns its exit code, its verdict
// (the first line) and its whole output.
func statusCheck(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, out := prepl(t, append([]string{"status"}, args...)...)
	verdict, _, _ := strings.Cut(out, "\n")
	return code, verdict, out
}

func wantStatus(t *testing.T, what string, wantCode int, wantIn []string, args ...string) string {
	t.Helper()
	code, verdict, out := statusCheck(t, args...)
	prefix := statusNames[wantCode] + ": "
	if code != wantCode || !strings.HasPrefix(verdict, prefix) {
		t.Errorf("%s: exit %d, verdict %q; want %d and %q\n%s", what, code, verdict, wantCode, prefix, out)
		return out
	}
	for _, w := range wantIn {
		if !strings.Contains(out, w) {
			t.Errorf("%s: output lacks %q\n%s", what, w, out)
		}
	}
	return out
}

// TestStatusExitCodes walks prepl status through each state of a target
// and a live prepl: nothing stored, a replay's channel, a replicate just
// started, running and caught up, lagging past --max-lag behind a row
// lock, unable to read its killed source, and gone.
func TestStatusExitCodes(t *testing.T) {
	t.Parallel()
	src, tgt := source(t, nil), targetServer(t)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 200, 4)

	wantStatus(t, "fresh target", statusCritical, []string{"no position stored on the target for any channel"}, "--target", tgt.URL())
	var schemas int
	if err := sandbox.MustOpen(t, tgt, "").QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'prepl'").Scan(&schemas); err != nil || schemas != 0 {
		t.Fatalf("prepl status wrote to the target it checks: %d prepl schema (%v)", schemas, err)
	}
	wantStatus(t, "target unreachable", statusCritical, []string{"cannot read the target", "127.0.0.1:1"},
		"--target", "mysql://root@127.0.0.1:1")
	wantStatus(t, "nothing at --metrics-addr", statusCritical, []string{"no prepl answers at 127.0.0.1:1"}, "--metrics-addr", "127.0.0.1:1")
	if code, _, out := statusCheck(t, "--target", tgt.URL(), "--max-lag", "1m"); code != 2 || !strings.Contains(out, "--max-lag needs --metrics-addr") {
		t.Errorf("--max-lag without --metrics-addr: exit %d, want 2 (usage)\n%s", code, out)
	}

	// A replay stores channel "replay": listed without --channel.
	mustPrepl(t, append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, binlogFiles(t, src)...)...)
	var replayed string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&replayed); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "after a replay", statusOK, []string{`channel "replay" slot`, fmt.Sprintf(`OK: channel "replay" applied %d`, sourceTxns(t, db))},
		"--target", tgt.URL())
	wantStatus(t, "another channel than the replay's", statusCritical,
		[]string{`no position stored for channel "default"`, "channels with a position: replay"}, "--target", tgt.URL(), "--channel", "default")

	// replicate on channel default from where the replay ended: live, with
	// nothing applied yet, it is starting, not missing.
	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--start-gtid", replayed,
		"--workers", "4", "--progress", "0", "--source-reconnect-timeout", "10m")
	live := []string{"--target", tgt.URL(), "--metrics-addr", r.addr}
	wantStatus(t, "replicate started, nothing applied", statusOK, []string{`channel "default": nothing applied yet`},
		append(live, "--channel", "default")...)

	writeLog(t, db, 1000, 200, 4)
	waitFor(t, "the catch-up", func() bool { st := r.status(t); return st.CaughtUp && st.Applied.GTIDPosition == st.SourceEnd.GTIDPos })
	out := wantStatus(t, "caught up", statusOK, []string{`channel "default" slot`, `channel "replay" slot`, `prepl replicate on channel "default" running`, "| lag=0.000s;3600;;0"},
		append(live, "--max-lag", "1h")...)
	if strings.Contains(out, "no position") {
		t.Errorf("caught up: a channel without position\n%s", out)
	}

	// A row lock on the target holds the next transactions: the lag grows
	// past --max-lag.
	lock, err := sandbox.MustOpen(t, tgt, "").Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.Exec("UPDATE w.hot SET n = n + 1000000 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	sandbox.MustExec(t, db, "UPDATE w.hot SET n = n + 1 WHERE id = 1")
	waitFor(t, "a lag past --max-lag 1s", func() bool {
		code, _, _ := statusCheck(t, append(live, "--max-lag", "1s")...)
		return code != statusOK
	})
	wantStatus(t, "lagging", statusWarning, []string{"more than --max-lag 1s"}, append(live, "--max-lag", "1s")...)
	lock.Rollback()
	waitFor(t, "the catch-up after the lock", func() bool { st := r.status(t); return st.CaughtUp && st.LagSeconds == 0 })
	wantStatus(t, "caught up again", statusOK, nil, append(live, "--max-lag", "1s")...)

	// The source is gone: prepl keeps reconnecting, and says it cannot read it.
	src.Kill()
	waitFor(t, "prepl to notice its source is gone", func() bool {
		code, _, _ := statusCheck(t, live...)
		return code != statusOK
	})
	wantStatus(t, "source gone", statusWarning, []string{"cannot read the source"}, live...)

	r.cmd.Process.Signal(syscall.SIGTERM)
	r.wait(t)
	wantStatus(t, "prepl gone", statusCritical, []string{"no prepl answers at " + r.addr, `channel "default" slot`}, live...)
}

// TestStatusWhileTargetIsGone: a prepl whose workers reconnect to a
// killed target is WARNING by its live status alone, and CRITICAL when
// status is also asked to read that target.
func TestStatusWhileTargetIsGone(t *testing.T) {
	t.Parallel()
	src, tgt := source(t, nil), targetServer(t)
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 40, 2)
	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "2", "--progress", "0",
		"--reconnect-timeout", "10m")
	waitFor(t, "the catch-up", func() bool { st := r.status(t); return st.CaughtUp && st.Applied.GTIDPosition == st.SourceEnd.GTIDPos })
	wantStatus(t, "caught up", statusOK, []string{`prepl replicate on channel "default" running`}, "--metrics-addr", r.addr)

	tgt.Kill()
	sandbox.MustExec(t, db, "UPDATE w.hot SET n = n + 1 WHERE id = 1")
	waitFor(t, "a worker reconnecting", func() bool {
		code, _, _ := statusCheck(t, "--metrics-addr", r.addr)
		return code != statusOK
	})
	wantStatus(t, "live status alone", statusWarning, []string{"workers reconnecting to the target", "worker 1:"}, "--metrics-addr", r.addr)
	wantStatus(t, "with the target", statusCritical, []string{"cannot read the target", "workers reconnecting to the target"},
		"--metrics-addr", r.addr, "--target", tgt.URL())
	// A graceful stop would wait for the transaction in flight, up to
	// --reconnect-timeout: the cleanup kills prepl.
}
