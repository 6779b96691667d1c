// Package corpus replays MariaDB's own test suite through prepl: each
// test of a list runs under mtr (Debian's mariadb-test) on a server with
// a ROW binlog, and its binlog is applied to fresh targets by
// `mariadb-binlog | mariadb` (the reference) and by `prepl replay` in
// modes serial, writeset and optimistic, with compaction on and off. The
// targets are compared with the reference, table by table (scenario.Dump),
// at checkpoints: before every DROP, TRUNCATE, ALTER and RENAME, and at
// the end. A stop is prepl exiting non-zero on a step the reference
// applied; a divergence is a target that differs from the reference.
// docs/corpus.md says how to run it (make corpus).
package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prepl/prepl/scenario"
)

// Options configure a corpus run.
type Options struct {
	Prepl      string // the prepl binary
	MTRDir     string // holds mysql-test-run.pl; "" looks in MTRDirs
	Tests      []string
	Exclusions map[string]Exclusion
	Images     []string // binlog_row_image values; nil: FULL
	Jobs       int      // tests at once; 0: 2
	WorkDir    string   // mtr's vardirs and the reference dumps; "" a temp dir, removed
	Keep       bool     // keep WorkDir's per-test directories
	// Replica adds MariaDB's replica as a second reference, compared
	// with mariadb-binlog | mariadb at every checkpoint (replica.go).
	Replica bool
	// Say receives each line as it happens: stops, divergences, reference
	// failures, mtr skips, and per-test progress.
	Say func(line string)
}

// Stop is prepl exiting non-zero on a step the reference applied.
type Stop struct {
	Test, Image string
	Config      Config
	At          Checkpoint
	Message     string
}

func (s Stop) String() string {
	return fmt.Sprintf("STOP %s %s %s %s: %s", s.Test, s.Image, s.Config, s.At, s.Message)
}

// Divergence is a target that differs from the reference at a checkpoint.
type Divergence struct {
	Test, Image string
	Config      Config
	At          Checkpoint
	Diff        string
}

func (d Divergence) String() string {
	return fmt.Sprintf("DIVERGE %s %s %s %s:\n%s", d.Test, d.Image, d.Config, d.At, indent(d.Diff))
}

// TestResult is one test under one row image.
type TestResult struct {
	Test, Image string
	MTR         string // pass, fail, skipped
	MTRComment  string
	Excluded    *Exclusion
	// ServerOpts are the test's own server options its targets started
	// with (from its .opt files and combination, as mtr ran it), minus
	// the binlog and replication ones.
	ServerOpts    []string
	Checkpoints   int    // compared (up to a reference failure)
	ReferenceFail string // where and why mariadb-binlog | mariadb failed
	Err           string // the corpus itself could not run the test
	Stops         []Stop
	Divergences   []Divergence
	// With Options.Replica: the checkpoints at which MariaDB's replica was
	// compared with mariadb-binlog | mariadb, and where they differ.
	// ReplicaOnly of the Checkpoints were judged against the replica
	// alone: it applied steps mariadb-binlog | mariadb failed on. Where
	// it fails too, ReplicaFail says how.
	ReplicaCheckpoints int
	RefDiffs           []RefDiff
	ReplicaOnly        int
	ReplicaFail        string
	Took               time.Duration
	// Where the time went: mtr, the reference's steps, prepl's steps and
	// the dumps; prepl's configurations run at once, and their times are
	// summed.
	MTRTime, RefTime, PreplTime, DumpTime, ReplicaTime time.Duration
}

// timed adds the time f takes to *d.
func timed(d *time.Duration, f func()) {
	start := time.Now()
	f()
	*d += time.Since(start)
}

// Result is a whole run.
type Result struct {
	Tests []TestResult
	Took  time.Duration
}

// Run runs the corpus.
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	mtrDir, err := FindMTR(o.MTRDir)
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("mariadb-binlog"); err != nil {
		return nil, fmt.Errorf("mariadb-binlog not found: install mariadb-client (make deps)")
	}
	if o.Prepl == "" {
		return nil, fmt.Errorf("no prepl binary: give one with --prepl (make build writes bin/prepl)")
	}
	if o.Images == nil {
		o.Images = []string{"FULL"}
	}
	if o.Jobs <= 0 {
		o.Jobs = 2
	}
	if o.Say == nil {
		o.Say = func(string) {}
	}
	if o.WorkDir == "" {
		if o.WorkDir, err = os.MkdirTemp("", "prepl-corpus-"); err != nil {
			return nil, err
		}
		if !o.Keep {
			defer os.RemoveAll(o.WorkDir)
		}
	}
	type unit struct {
		i           int
		test, image string
	}
	var units []unit
	for _, img := range o.Images {
		for _, t := range o.Tests {
			units = append(units, unit{len(units), t, img})
		}
	}
	res := &Result{Tests: make([]TestResult, len(units))}
	work := make(chan unit)
	var wg sync.WaitGroup
	for range o.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range work {
				if ctx.Err() != nil {
					continue // interrupted: not run
				}
				res.Tests[u.i] = runTest(ctx, o, mtrDir, u.test, u.image)
			}
		}()
	}
	for _, u := range units {
		if ctx.Err() != nil {
			break
		}
		if e, ok := o.Exclusions[u.test]; ok {
			res.Tests[u.i] = TestResult{Test: u.test, Image: u.image, Excluded: &e}
			continue
		}
		work <- u
	}
	close(work)
	wg.Wait()
	res.Took = time.Since(start)
	return res, ctx.Err()
}

// runTest runs one test under mtr and applies its binlog every way.
func runTest(ctx context.Context, o Options, mtrDir, test, image string) (r TestResult) {
	start := time.Now()
	r = TestResult{Test: test, Image: image}
	dir := filepath.Join(o.WorkDir, test+"-"+image)
	os.RemoveAll(dir)
	defer func() {
		r.Took = time.Since(start)
		if !o.Keep {
			os.RemoveAll(dir)
		}
		o.Say(progressLine(r))
	}()
	var m *mtrRun
	var err error
	timed(&r.MTRTime, func() { m, err = runMTR(ctx, mtrDir, filepath.Join(dir, "var"), test, image) })
	if m != nil {
		r.MTR, r.MTRComment = m.Result, m.Comment
	}
	if err != nil {
		r.Err = err.Error()
		return r
	}
	if m.Result == "skipped" || m.Result == "disabled" {
		return r
	}
	if len(m.Binlogs) == 0 {
		r.Err = "mtr left no binlog file"
		return r
	}
	opts, _, err := TargetOptions(m.ServerOpts)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	r.ServerOpts = opts
	cps, err := Checkpoints(m.Binlogs)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	// The targets' template: mtr's install.db, writable (mtr makes it
	// read-only).
	tmpl := filepath.Join(dir, "install.db")
	if out, err := exec.Command("cp", "-a", m.InstallDB, tmpl).CombinedOutput(); err != nil {
		r.Err = fmt.Sprintf("copy install.db: %v: %s", err, out)
		return r
	}
	exec.Command("chmod", "-R", "u+w", tmpl).Run()
	configs := []Config{{}}
	for _, mode := range Modes {
		configs = append(configs, Config{Mode: mode, Compact: true}, Config{Mode: mode, Compact: false})
	}
	// Every target starts at once: a start-up mostly waits (on the copy
	// of install.db, on InnoDB), and a test's replays are short.
	ntargets := len(configs)
	if o.Replica {
		ntargets++ // the last
	}
	targets := make([]chan started, ntargets)
	for i := range targets {
		targets[i] = make(chan started, 1)
		go func(ch chan started) {
			t, err := startTarget(ctx, tmpl, opts)
			ch <- started{t, err}
		}(targets[i])
	}
	defer func() { // the targets no configuration took
		for _, ch := range targets {
			if st := <-ch; st.t != nil {
				st.t.Close()
			}
		}
	}()
	// take(i) waits for target i; its taker closes it, and leaves a zero
	// value for the cleanup above.
	take := func(i int) func() (*target, error) {
		return func() (*target, error) {
			st := <-targets[i]
			targets[i] <- started{}
			return st.t, st.err
		}
	}
	refs, ok := reference(ctx, &r, m.Binlogs, cps, take(0), filepath.Join(dir, "ref"))
	if !ok {
		return r
	}
	if o.Replica {
		// MariaDB's replica, compared with the reference; where the
		// reference failed and the replica goes on, its states are the
		// reference for the checkpoints after.
		rep := TestResult{Test: r.Test, Image: r.Image}
		more, err := replicaRun(ctx, o, &rep, tmpl, m.Binlogs, cps, refs, take(len(configs)), filepath.Join(dir, "replica"))
		r.ReplicaCheckpoints, r.RefDiffs, r.ReplicaTime, r.ReplicaFail = rep.ReplicaCheckpoints, rep.RefDiffs, rep.ReplicaTime, rep.ReplicaFail
		r.DumpTime += rep.DumpTime
		if err != nil {
			r.Err = "replica: " + err.Error()
		}
		refs = append(refs, more...)
		r.ReplicaOnly = len(more)
	}
	if len(refs) == 0 {
		return r
	}
	r.Checkpoints = len(refs)
	// prepl's configurations run at once, each on its own target: a step
	// mostly waits (on the target's DDL, on process start-up), so they
	// overlap well even on two cores.
	subs := make([]TestResult, len(configs)-1)
	errs := make([]error, len(configs)-1)
	var wg sync.WaitGroup
	for i, c := range configs[1:] {
		subs[i] = TestResult{Test: r.Test, Image: r.Image}
		start := take(i + 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = preplRun(ctx, o, &subs[i], c, m.Binlogs, cps[:len(refs)], refs, start)
		}()
	}
	wg.Wait()
	for i, s := range subs {
		r.Stops = append(r.Stops, s.Stops...)
		r.Divergences = append(r.Divergences, s.Divergences...)
		r.PreplTime += s.PreplTime
		r.DumpTime += s.DumpTime
		if errs[i] != nil && r.Err == "" {
			r.Err = fmt.Sprintf("%s: %v", configs[i+1], errs[i])
		}
	}
	return r
}

type started struct {
	t   *target
	err error
}

// refDump is the reference's state at a checkpoint: its hash, and the
// file holding its lines (read only to show a difference).
type refDump struct {
	sum  [32]byte
	path string
}

// reference applies the binlog with mariadb-binlog | mariadb checkpoint by
// checkpoint and keeps each state; it stops at the first step it cannot
// apply (r.ReferenceFail), and returns the states it reached.
func reference(ctx context.Context, r *TestResult, files []string, cps []Checkpoint, start func() (*target, error), dir string) ([]refDump, bool) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.Err = err.Error()
		return nil, false
	}
	t, err := start()
	if err != nil {
		r.Err = "start the reference target: " + err.Error()
		return nil, false
	}
	defer t.Close()
	var out []refDump
	var from *Checkpoint
	for i, cp := range cps {
		timed(&r.RefTime, func() { err = t.replayRef(ctx, files, from, cp) })
		if err != nil {
			r.ReferenceFail = fmt.Sprintf("%s: %v", cp, err)
			break
		}
		var lines []string
		timed(&r.DumpTime, func() { lines, err = t.dump(ctx) })
		if err != nil {
			r.Err = fmt.Sprintf("dump the reference %s: %v", cp, err)
			return nil, false
		}
		d := refDump{sum: sumLines(lines), path: filepath.Join(dir, fmt.Sprintf("%04d.json", i))}
		b, _ := json.Marshal(lines)
		if err := os.WriteFile(d.path, b, 0o644); err != nil {
			r.Err = err.Error()
			return nil, false
		}
		out = append(out, d)
		from = &cps[i]
	}
	return out, true
}

// preplRun applies the binlog with prepl in config c up to each
// checkpoint, comparing the target with the reference there; it ends at
// the first stop or divergence. An error is the corpus's own failure.
func preplRun(ctx context.Context, o Options, r *TestResult, c Config, files []string, cps []Checkpoint, refs []refDump, start func() (*target, error)) error {
	t, err := start()
	if err != nil {
		return fmt.Errorf("start target: %w", err)
	}
	defer t.Close()
	for i, cp := range cps {
		var out string
		timed(&r.PreplTime, func() { out, err = t.replayPrepl(ctx, o.Prepl, c, files, cp) })
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			msg := preplError(out)
			if err == errStepTimeout {
				msg = err.Error() + " (its last output: " + msg + ")"
			}
			s := Stop{Test: r.Test, Image: r.Image, Config: c, At: cp, Message: msg}
			r.Stops = append(r.Stops, s)
			o.Say(s.String())
			return nil
		}
		var lines []string
		timed(&r.DumpTime, func() { lines, err = t.dump(ctx) })
		if err != nil {
			return fmt.Errorf("dump %s: %w", cp, err)
		}
		if sumLines(lines) == refs[i].sum {
			continue
		}
		want, err := readDump(refs[i].path)
		if err != nil {
			return err
		}
		d := Divergence{Test: r.Test, Image: r.Image, Config: c, At: cp, Diff: scenario.Diff(want, lines)}
		r.Divergences = append(r.Divergences, d)
		o.Say(d.String())
		return nil
	}
	return nil
}

// readDump reads a reference state written by reference().
func readDump(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines []string
	return lines, json.Unmarshal(b, &lines)
}

func sumLines(lines []string) [32]byte {
	h := sha256.New()
	for _, l := range lines {
		fmt.Fprintf(h, "%d:%s", len(l), l)
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

func progressLine(r TestResult) string {
	s := fmt.Sprintf("test %s %s: mtr %s", r.Test, r.Image, r.MTR)
	if r.MTRComment != "" && r.MTR != "pass" {
		s += " (" + oneLine(r.MTRComment) + ")"
	}
	s += fmt.Sprintf(", %d checkpoints, %d stops, %d divergences", r.Checkpoints, len(r.Stops), len(r.Divergences))
	if r.ReplicaCheckpoints > 0 || len(r.RefDiffs) > 0 {
		s += fmt.Sprintf(", replica %d checkpoints, %d differences from mariadb-binlog", r.ReplicaCheckpoints, len(r.RefDiffs))
		if r.ReplicaOnly > 0 {
			s += fmt.Sprintf(" (%d checkpoints judged against the replica alone)", r.ReplicaOnly)
		}
	}
	if r.ReplicaFail != "" {
		s += ", REPLICA FAILS TOO " + r.ReplicaFail
	}
	if r.ReferenceFail != "" {
		s += ", REFERENCE FAILS " + r.ReferenceFail
	}
	if r.Err != "" {
		s += ", ERROR " + oneLine(r.Err)
	}
	if len(r.Stops)+len(r.Divergences) > 0 || r.ReferenceFail != "" || r.Err != "" {
		s += withOpts(r.ServerOpts)
	}
	rd := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	s += fmt.Sprintf(" (%s: mtr %s, reference %s, prepl %s summed over configurations, dumps %s", rd(r.Took),
		rd(r.MTRTime), rd(r.RefTime), rd(r.PreplTime), rd(r.DumpTime))
	if r.ReplicaTime > 0 {
		s += fmt.Sprintf(", replica %s", rd(r.ReplicaTime))
	}
	return s + ")"
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// Summary is the run's one-line summary.
func (res *Result) Summary() string {
	var tests, skipped, refFails, errs, cps, stops, divs, excl, repCps, repDiffs, repOnly int
	replica := false
	kinds := map[string]int{}
	for _, t := range res.Tests {
		switch {
		case t.Excluded != nil:
			excl++
			kinds[t.Excluded.Kind]++
			continue
		case t.Test == "":
			continue // not run (interrupted)
		}
		tests++
		if t.MTR == "skipped" || t.MTR == "disabled" {
			skipped++
		}
		if t.ReferenceFail != "" {
			refFails++
		}
		if t.Err != "" {
			errs++
		}
		cps += t.Checkpoints
		repCps += t.ReplicaCheckpoints
		repDiffs += len(t.RefDiffs)
		repOnly += t.ReplicaOnly
		replica = replica || t.ReplicaCheckpoints > 0 || len(t.RefDiffs) > 0
		stops += len(t.Stops)
		divs += len(t.Divergences)
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(ks)
	ex := fmt.Sprintf("%d exclusions", excl)
	if len(ks) > 0 {
		ex += " (" + strings.Join(ks, ", ") + ")"
	}
	rep := ""
	if replica {
		rep = fmt.Sprintf(", replica at %d checkpoints: %d differences from mariadb-binlog | mariadb, %d checkpoints judged against the replica alone", repCps, repDiffs, repOnly)
	}
	return fmt.Sprintf("corpus: %d tests (%d skipped by mtr, %d reference fails, %d errors), %d checkpoints, %d stops, %d divergences%s, %s, in %s",
		tests, skipped, refFails, errs, cps, stops, divs, rep, ex, res.Took.Round(time.Second))
}

// Failed reports whether the run found a stop, a divergence or an error
// of its own.
func (res *Result) Failed() bool {
	for _, t := range res.Tests {
		if len(t.Stops) > 0 || len(t.Divergences) > 0 || t.Err != "" {
			return true
		}
	}
	return false
}
