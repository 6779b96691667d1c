package sequencer

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// workload is the script command "run": a target simulated in the
// script's clock, for the controller's scripts. The input never runs dry
// (every transaction changes its own row); a unit executes for
// work × members, stretched when more units run than the target has
// cores and by contention per other unit running, then commits for
// commit (an fsync); every conflictEvery-th unit started ahead of its
// turn fails at the end of its execution (work done twice), and the
// target reports every waitEvery-th waiting for a lock of the oldest
// unit on a worker (the wait itself is not simulated). The script's clock, sequencer
// and units go on from where the last run left them.
type workload struct {
	work, commit  time.Duration
	cores         int
	contention    float64 // extra execution time per other unit running
	conflictEvery int
	waitEvery     int
	// hot: every transaction changes the same row, so each unit depends
	// on the one before it (sysbench's hot rows in units of hundreds).
	hot bool
	// total: the input ends after this many transactions in all (0: never),
	// as a replay's files do.
	total int
}

func parseWorkload(args map[string]string) workload {
	w := workload{work: 50 * time.Microsecond, commit: time.Millisecond, cores: 2}
	dur := func(k string, d *time.Duration) {
		if v, ok := args[k]; ok {
			us, _ := strconv.Atoi(strings.TrimSuffix(v, "us"))
			*d = time.Duration(us) * time.Microsecond
		}
	}
	dur("work", &w.work)
	dur("commit", &w.commit)
	if v, ok := args["cores"]; ok {
		w.cores, _ = strconv.Atoi(v)
	}
	if v, ok := args["contention"]; ok {
		pct, _ := strconv.Atoi(strings.TrimSuffix(v, "%"))
		w.contention = float64(pct) / 100
	}
	if v, ok := args["conflict-every"]; ok {
		w.conflictEvery, _ = strconv.Atoi(v)
	}
	_, w.hot = args["hot"]
	if v, ok := args["total"]; ok {
		w.total, _ = strconv.Atoi(v)
	}
	if v, ok := args["wait-every"]; ok {
		w.waitEvery, _ = strconv.Atoi(v)
	}
	return w
}

type simUnit struct {
	u         *Unit
	execEnd   time.Time // zero once executed
	commitEnd time.Time // zero until its commit runs
	commitNow bool
	fail      bool
}

// run drives the sequencer for d of the script's clock and returns the
// limits it chose, in order, and what it committed.
func (sc *script) run(d time.Duration, w workload) string {
	s := sc.s
	end := sc.now.Add(d)
	if sc.onWorker == nil {
		sc.onWorker, sc.failedOnce = map[int]*simUnit{}, map[uint64]bool{}
	}
	onWorker, failedOnce := sc.onWorker, sc.failedOnce
	trace := []string{strconv.Itoa(s.Settled())}
	probes, probing := 0, false
	txns0, conflicts0 := s.Stats().Txns, s.Stats().Errors["conflict"]
	backlog := func() bool { return w.total == 0 || sc.next < w.total }
	start, doneAt := sc.now, time.Duration(0)
	for sc.now.Before(end) {
		if doneAt == 0 && s.Done() {
			doneAt = sc.now.Sub(start)
			break
		}
		// The engine feeds whatever the sequencer wants before it waits
		// for the next event, admissions included (read, then Ready).
		read := func() []Action {
			for s.WantsInput() {
				if w.total > 0 && sc.next >= w.total {
					s.EndOfInput()
					break
				}
				sc.next++
				key := sc.next
				if w.hot {
					key = 0
				}
				s.Read(scriptTxn(sc.next, key, "", false, 100), false)
			}
			s.Tick(sc.now, backlog())
			return s.Ready()
		}
		var waits []int // workers whose unit the target shows waiting
		for acts := read(); len(acts) > 0; acts = read() {
			for _, a := range acts {
				switch a.Kind {
				case Admit:
					s.Admitted(a.Unit.Seq())
				case Start:
					k := len(onWorker) + 1
					exec := time.Duration(float64(w.work) * float64(len(a.Unit.Members)) *
						max(1, float64(k)/float64(w.cores)) * (1 + w.contention*float64(k-1)))
					su := &simUnit{u: a.Unit, execEnd: sc.now.Add(exec), commitNow: a.CommitNow}
					if !a.CommitNow && !failedOnce[a.Unit.Seq()] {
						sc.ahead++
						su.fail = w.conflictEvery > 0 && sc.ahead%w.conflictEvery == 0
						if w.waitEvery > 0 && sc.ahead%w.waitEvery == 0 {
							waits = append(waits, a.Worker)
						}
					}
					onWorker[a.Worker] = su
				case Commit:
					onWorker[a.Worker].commitEnd = sc.now.Add(w.commit)
				case Abort, Kill:
					delete(onWorker, a.Worker)
					if err := s.Failed(a.Unit.Seq(), Failure{Class: Retry, Yielded: a.Kind == Abort}); err != nil {
						sc.t.Fatal(err)
					}
				}
			}
		}
		for _, wk := range waits {
			oldest := -1
			for o, su := range onWorker {
				if oldest < 0 || su.u.Seq() < onWorker[oldest].u.Seq() {
					oldest = o
				}
			}
			if oldest != wk {
				s.LockWaits([]LockWait{{Requester: wk, Blocker: oldest}})
			}
		}
		if l := strconv.Itoa(s.Settled()); l != trace[len(trace)-1] {
			trace = append(trace, l)
		}
		if p := s.Concurrency() != s.Settled(); p != probing {
			probing = p
			if p {
				probes++
			}
		}
		// The next event: an execution or a commit that ends, or the
		// sequencer's deadline.
		next, nw := end, -1
		for wk, su := range onWorker {
			t := su.execEnd
			if t.IsZero() {
				t = su.commitEnd
			}
			if !t.IsZero() && (t.Before(next) || t.Equal(next) && (nw < 0 || wk < nw)) {
				next, nw = t, wk
			}
		}
		if dl := s.Deadline(); !dl.IsZero() && dl.Before(next) {
			next, nw = dl, -1
		}
		sc.now = next
		s.Tick(sc.now, backlog())
		if nw < 0 {
			continue
		}
		su := onWorker[nw]
		seq := su.u.Seq()
		switch {
		case !su.execEnd.IsZero() && su.fail:
			delete(onWorker, nw)
			failedOnce[seq] = true
			if err := s.Failed(seq, Failure{Class: Retry}); err != nil {
				sc.t.Fatal(err)
			}
		case !su.execEnd.IsZero() && su.commitNow:
			su.execEnd, su.commitEnd = time.Time{}, sc.now.Add(w.commit)
		case !su.execEnd.IsZero():
			su.execEnd = time.Time{}
			s.Prepared(seq)
		default:
			delete(onWorker, nw)
			s.Committed(seq)
		}
	}
	st := s.Stats()
	out := fmt.Sprintf("concurrency %s (%d probes); %d txns committed, %d conflicts", strings.Join(trace, " "), probes,
		st.Txns-txns0, st.Errors["conflict"]-conflicts0)
	if doneAt > 0 {
		out += fmt.Sprintf("; all in %dms", doneAt.Milliseconds())
	}
	return out
}
