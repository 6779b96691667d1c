//go:build accuracy

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/analyze"
	"github.com/prepl/prepl/bench"
	"github.com/prepl/prepl/sandbox"
)

// TestAnalyzeAccuracy measures prepl analyze's predictions against the
// prepl replay times they predict (docs/analyze.md, "Predicted against
// measured"): for each workload, `prepl bench` times prepl replay with
// --workers 0, 4 and 16 on a config-B target, ACCURACY_REPEATS times
// (default 3), keeping the binlog; then `prepl analyze --calibrate` on a
// config-B sandbox restored from the snapshot the binlog starts at (a
// replay's target) predicts the same binlog, as many times. It writes the
// table, and the same cells split into the start (what a run costs
// besides applying) and the apply, to ACCURACY_OUT/accuracy.md (default
// bench-out/accuracy) and to the test log. It asserts nothing about the
// accuracy (timing thresholds do not belong in tests): it fails only when
// a run fails. Run it with `make analyze-accuracy`.
func TestAnalyzeAccuracy(t *testing.T) {
	out := envOr("ACCURACY_OUT", "bench-out/accuracy")
	workloads := strings.Split(envOr("ACCURACY_WORKLOADS", "oltp,update-index,update-index-serial,write-only,insert"), ",")
	repeats, err := strconv.Atoi(envOr("ACCURACY_REPEATS", "3"))
	if err != nil || repeats < 1 {
		t.Fatalf("ACCURACY_REPEATS %q: want a number of 1 or more", os.Getenv("ACCURACY_REPEATS"))
	}
	if out, err = filepath.Abs(out); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := preplBinary(t)
	// prepl bench --keep leaves the sources (and their binlogs) on disk:
	// everything goes under one directory, removed at the end.
	tmp, err := os.MkdirTemp(out, "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Setenv("TMPDIR", tmp)

	var rows []accuracyRow
	for _, w := range workloads {
		dir := filepath.Join(out, w)
		load0 := bench.LoadAvg()
		cmd := exec.Command(bin, "bench", "--workloads", w, "--rows", "100000", "--events", "20000", "--threads", "0,4,16",
			"--configs", "B", "--systems", "prepl-replay", "--prepl-modes", "writeset", "--repeats", strconv.Itoa(repeats),
			"--limit-args", "", "--keep", "--out", dir)
		var progress strings.Builder
		cmd.Stderr = io.MultiWriter(os.Stderr, &progress)
		if b, err := cmd.Output(); err != nil {
			t.Fatalf("prepl bench %s: %v\n%s", w, err, b)
		}
		measured := readMeasured(t, dir, w)
		files := replayedFiles(t, filepath.Join(dir, "logs", w+"-B-prepl-replay-serial-0-r1.log"))
		m := snapshotRE.FindStringSubmatch(progress.String())
		if m == nil {
			t.Fatalf("prepl bench %s did not say where it kept the snapshot", w)
		}

		// The calibration target is a replay's: config B (no binlog,
		// innodb_flush_log_at_trx_commit=1) restored from the snapshot
		// the binlog starts at, so that --calibrate can time the target
		// on the binlog's own units.
		o := sandbox.Defaults()
		o.ServerID, o.FlushLogAtTrxCommit, o.FromDataDir = 2, 1, m[1]
		tgt, err := sandbox.Start(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		var preds []*analyze.Report
		for i := range repeats {
			args := append([]string{"analyze", "--calibrate", tgt.URL(), "--workers", "1,4,16", "--modes", "writeset", "--json"}, files...)
			c := exec.Command(bin, args...)
			c.Stderr = os.Stderr
			b, err := c.Output()
			if err != nil {
				tgt.Close()
				t.Fatalf("prepl analyze %s (%d): %v", w, i+1, err)
			}
			var r analyze.Report
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("prepl analyze %s: %v", w, err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("prediction-%d.json", i+1)), b, 0o644); err != nil {
				t.Fatal(err)
			}
			preds = append(preds, &r)
		}
		tgt.Close()
		rows = append(rows, accuracyRows(w, measured, preds, max(load0, bench.LoadAvg()))...)
	}
	md := accuracyMarkdown(rows)
	t.Logf("\n%s", md)
	if err := os.WriteFile(filepath.Join(out, "accuracy.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// measuredRun is one timed replay: the whole process (seconds), and the
// engine's own elapsed time from its log ("replay done ...
// elapsed_seconds=").
type measuredRun struct{ seconds, engine, preplCPU, serverCPU float64 }

var (
	elapsedRE  = regexp.MustCompile(`elapsed_seconds=([0-9.]+)`)
	snapshotRE = regexp.MustCompile(`keeping source \S+ and snapshot (\S+)`)
)

// readMeasured reads results.csv and the runs' logs, by workers.
func readMeasured(t *testing.T, dir, w string) map[int][]measuredRun {
	f, err := os.Open(filepath.Join(dir, bench.ResultsCSV))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := bench.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][]measuredRun{}
	for _, r := range res {
		if !r.OK() {
			t.Fatalf("%s: a run failed: %s", w, r.Err)
		}
		log, err := os.ReadFile(filepath.Join(dir, "logs", fmt.Sprintf("%s-%s-%s-%s-%d-r%d.log", r.Workload, r.Config, r.System, r.Mode, r.Threads, r.Repeat)))
		if err != nil {
			t.Fatal(err)
		}
		m := elapsedRE.FindSubmatch(log)
		if m == nil {
			t.Fatalf("%s: no elapsed_seconds in the log of %+v", w, r.Cell)
		}
		engine, _ := strconv.ParseFloat(string(m[1]), 64)
		out[r.Threads] = append(out[r.Threads], measuredRun{r.Seconds, engine, r.PreplCPU, r.ServerCPU})
	}
	return out
}

// replayedFiles are the binlog files of the replay command that a run's
// log starts with ("$ prepl replay ... FILE...").
func replayedFiles(t *testing.T, log string) []string {
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		t.Fatalf("%s is empty", log)
	}
	var files []string
	for _, a := range slices.Backward(strings.Fields(sc.Text())) {
		if st, err := os.Stat(a); err != nil || st.IsDir() {
			break
		}
		files = append([]string{a}, files...)
	}
	if len(files) == 0 {
		t.Fatalf("no binlog file at the end of %s's command", log)
	}
	return files
}

// accuracyRow is one cell of the table: medians and spreads.
type accuracyRow struct {
	workload string
	workers  int
	load     float64
	// Measured: the whole process, its start (process less the engine),
	// the engine; CPU of prepl and of the target.
	meas, measStart, measEngine spread
	preplCPU, serverCPU         float64
	// Predicted: the whole run and its start (Costs.Start).
	pred, predStart spread
	measSpeedup     float64
	predSpeedup     float64
}

type spread struct{ med, lo, hi float64 }

func spreadOf(xs []float64) spread {
	s := slices.Clone(xs)
	slices.Sort(s)
	return spread{med: s[len(s)/2], lo: s[0], hi: s[len(s)-1]}
}

func accuracyRows(w string, measured map[int][]measuredRun, preds []*analyze.Report, load float64) []accuracyRow {
	var rows []accuracyRow
	for _, workers := range []int{0, 4, 16} {
		r := accuracyRow{workload: w, workers: workers, load: load}
		var sec, start, engine, pcpu, scpu []float64
		for _, m := range measured[workers] {
			sec, start, engine = append(sec, m.seconds), append(start, m.seconds-m.engine), append(engine, m.engine)
			pcpu, scpu = append(pcpu, m.preplCPU), append(scpu, m.serverCPU)
		}
		r.meas, r.measStart, r.measEngine = spreadOf(sec), spreadOf(start), spreadOf(engine)
		r.preplCPU, r.serverCPU = spreadOf(pcpu).med, spreadOf(scpu).med
		var ps, pst []float64
		for _, p := range preds {
			s := p.Serial.Seconds
			if workers > 0 {
				pr, _ := p.Prediction("writeset", workers)
				s = pr.Seconds
			}
			ps, pst = append(ps, s), append(pst, p.Model.Costs.Start.Seconds())
		}
		r.pred, r.predStart = spreadOf(ps), spreadOf(pst)
		rows = append(rows, r)
	}
	for i := range rows {
		rows[i].measSpeedup = rows[0].meas.med / rows[i].meas.med
		rows[i].predSpeedup = rows[0].pred.med / rows[i].pred.med
	}
	return rows
}

func accuracyMarkdown(rows []accuracyRow) string {
	var b strings.Builder
	within := func(x float64) bool { return x >= 0.75 && x <= 1.25 }
	abs, sp := 0, 0
	fmt.Fprintf(&b, "%s, prepl analyze against prepl replay (writeset, config B); medians (spread) of the repeats\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	b.WriteString("| workload | workers | predicted s (spread) | measured s (spread) | predicted / measured | predicted speedup | measured speedup | predicted / measured |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		ra, rs := r.pred.med/r.meas.med, r.predSpeedup/r.measSpeedup
		if within(ra) {
			abs++
		}
		if within(rs) {
			sp++
		}
		fmt.Fprintf(&b, "| %s | %d | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | **%.2f** | %.2f | %.2f | **%.2f** |\n", r.workload, r.workers,
			r.pred.med, r.pred.lo, r.pred.hi, r.meas.med, r.meas.lo, r.meas.hi, ra, r.predSpeedup, r.measSpeedup, rs)
	}
	fmt.Fprintf(&b, "\nWithin 25%%: absolute %d of %d, speedup %d of %d.\n\n", abs, len(rows), sp, len(rows))
	b.WriteString("By phase (medians, seconds): the start is what a run costs besides applying (measured: the process's time less the\n")
	b.WriteString("engine's elapsed_seconds; predicted: Costs.Start), the apply is the rest; CPU of prepl and of the target as measured.\n\n")
	b.WriteString("| workload | workers | start predicted | start measured | apply predicted | apply measured | prepl CPU | target CPU | load |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.1f |\n", r.workload, r.workers,
			r.predStart.med, r.measStart.med, r.pred.med-r.predStart.med, r.measEngine.med, r.preplCPU, r.serverCPU, r.load)
	}
	return b.String()
}
