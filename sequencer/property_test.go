package sequencer

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/depend"
)

// TestAnyEventOrder drives sequencers with random streams and a random
// order of every event the actions allow (prepared, committed, failed
// with a retryable class, yields, lock waits, time passing; with and
// without the controller choosing how many units run), and checks
// the two promises: units commit in source order (per commit-order key),
// and no checkpoint's floor covers a transaction that has not committed.
// At the end everything not skipped has committed exactly once.
func TestAnyEventOrder(t *testing.T) {
	modes := []depend.Mode{depend.Serial, depend.CommitOrder, depend.Writeset, depend.Optimistic, depend.Schema}
	changes := 0 // limits the controller chose beyond the first, over all runs
	for i := 0; i < 600; i++ {
		seed := uint64(i)
		r := rand.New(rand.NewPCG(seed, 1))
		mode := modes[r.IntN(len(modes))]
		workers, unit := 1+r.IntN(4), 1+r.IntN(4)
		n := 1 + r.IntN(40)
		name := fmt.Sprintf("seed=%d/%s/w%d/u%d/n%d", seed, mode, workers, unit, n)
		c, err := randomRun(r, mode, workers, unit, n)
		changes += c
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if changes == 0 {
		t.Error("the controller never changed the limit: the runs with Adapt did not test it")
	}
}

type inFlight struct {
	u         *Unit
	commitNow bool // Start with CommitNow, or a Commit given
	prepared  bool
	abort     bool // Abort given or statement killed: it must fail
}

func randomRun(r *rand.Rand, mode depend.Mode, workers, unit, n int) (limitChanges int, err error) {
	// Half the runs adapt the number of units in flight (the controller
	// moves it with the commits' pace), half see the target's lock waits.
	s, err := New(Config{Mode: mode, Workers: workers, UnitTxns: unit, Retries: 1 << 20, WindowBytes: 100 * (1 + r.IntN(8)),
		Catalog: scriptCatalog, Adapt: r.IntN(2) == 0, WaitsVisible: r.IntN(2) == 0, AdaptEvery: 5 * time.Millisecond}, Origin{})
	if err != nil {
		return 0, err
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	next := 1
	skipped := map[int]bool{}
	committed := map[int]bool{}
	lastByKey := map[string]int{}
	running := map[int]*inFlight{} // by worker
	limits := map[int]bool{}
	ended := false
	spins := 0 // Ready runs at one time whose deadline was not after it
	for step := 0; ; step++ {
		if step > 200000 {
			return 0, fmt.Errorf("no progress after %d steps", step)
		}
		if !ended && s.WantsInput() && r.IntN(3) > 0 {
			if next > n {
				s.EndOfInput()
				ended = true
			} else {
				skip := r.IntN(6) == 0
				ddl := !skip && r.IntN(12) == 0
				schema := []string{"s", "s2"}[r.IntN(2)]
				skipped[next] = skip
				s.Read(scriptTxn(next, r.IntN(5), schema, ddl, 100), skip)
				next++
			}
		}
		now = now.Add(time.Duration(r.IntN(3)) * time.Millisecond)
		backlog := !ended && r.IntN(2) == 0
		s.Tick(now, backlog)
	ready:
		for acts := s.Ready(); len(acts) > 0; acts = s.Ready() {
			for _, a := range acts {
				switch a.Kind {
				case Admit:
					s.Admitted(a.Unit.Seq())
				case Start:
					if running[a.Worker] != nil {
						return 0, fmt.Errorf("start %s on busy worker %d", a.Unit, a.Worker)
					}
					if mode == depend.Writeset {
						for _, f := range running {
							if conflicting(a.Unit, f.u) {
								return 0, fmt.Errorf("start %s while %s runs: they share a key", a.Unit, f.u)
							}
						}
					}
					running[a.Worker] = &inFlight{u: a.Unit, commitNow: a.CommitNow}
					if !a.CommitNow && len(running) > s.Concurrency() {
						return 0, fmt.Errorf("start %s ahead of its turn with %d units on workers, limit %d", a.Unit, len(running), s.Concurrency())
					}
					limits[s.Concurrency()] = true
					if a.CommitNow {
						if err := checkFloor(a, committed, skipped); err != nil {
							return 0, err
						}
					}
				case Commit:
					f := running[a.Worker]
					if f == nil || f.u != a.Unit || !f.prepared {
						return 0, fmt.Errorf("commit %s on worker %d that does not hold it prepared", a.Unit, a.Worker)
					}
					f.commitNow = true
					if err := checkFloor(a, committed, skipped); err != nil {
						return 0, err
					}
				case Abort, Kill:
					if f := running[a.Worker]; f != nil && f.u == a.Unit {
						f.abort = true
					}
				}
			}
		}
		// A deadline is a time something is due: once Ready has done
		// what is due now, one not after now makes the caller's timer
		// fire at once. Once more may be due (a unit started forming
		// while Ready ran); twice, and it would fire again and again.
		if d := s.Deadline(); !d.IsZero() && !d.After(now) {
			if spins++; spins > 1 {
				return 0, fmt.Errorf("deadline %s not after now %s twice once Ready has run: the caller would spin", d, now)
			}
			s.Tick(now, backlog)
			goto ready
		}
		spins = 0
		if s.Done() {
			break
		}
		if len(running) == 0 {
			continue
		}
		if r.IntN(8) == 0 && len(running) > 1 { // a random lock wait, its holder named or not
			var ws []int
			for w := range running {
				ws = append(ws, w)
			}
			blk := ws[r.IntN(len(ws))]
			if r.IntN(4) == 0 {
				blk = BlockerUnknown
			}
			s.LockWaits([]LockWait{{Requester: ws[r.IntN(len(ws))], Blocker: blk}})
			continue
		}
		if r.IntN(200) == 0 {
			s.LockWaitsUnseen()
		}
		// One event of one worker.
		var w int
		k := r.IntN(len(running))
		for x := range running {
			if k == 0 {
				w = x
				break
			}
			k--
		}
		f := running[w]
		seq := f.u.Seq()
		switch {
		case f.abort && (f.prepared || r.IntN(2) == 0):
			delete(running, w)
			if err := s.Failed(seq, Failure{Class: Retry, Yielded: f.prepared}); err != nil {
				return 0, err
			}
		case r.IntN(6) == 0 && !(f.prepared && !f.commitNow):
			delete(running, w)
			if err := s.Failed(seq, Failure{Class: []Class{Retry, Connection}[r.IntN(2)]}); err != nil {
				return 0, err
			}
		case f.commitNow:
			delete(running, w)
			key := depend.OrderKey(mode, f.u.Txn)
			first := int(f.u.Members[0].SeqNo)
			if first <= lastByKey[key] {
				return 0, fmt.Errorf("unit %s committed after %d of the same key %q", f.u, lastByKey[key], key)
			}
			for _, m := range f.u.Members {
				if committed[int(m.SeqNo)] {
					return 0, fmt.Errorf("%d committed twice", m.SeqNo)
				}
				committed[int(m.SeqNo)] = true
			}
			lastByKey[key] = int(f.u.Last().SeqNo)
			s.Committed(seq)
		case !f.prepared:
			f.prepared = true
			s.Prepared(seq)
		}
	}
	limitChanges = len(limits) - 1
	for i := 1; i <= n; i++ {
		if !committed[i] && !skipped[i] {
			return 0, fmt.Errorf("transaction %d never committed", i)
		}
	}
	if st := s.Stats(); st.InFlight != 0 || st.QueueBytes != 0 {
		return 0, fmt.Errorf("done with %d units, %d bytes in flight", st.InFlight, st.QueueBytes)
	}
	return limitChanges, nil
}

// conflicting reports whether units u and v may not run at the same time
// in mode writeset, from their keys: either is a barrier, or they share
// a key and one of them holds it exclusive.
func conflicting(u, v *Unit) bool {
	lu, wu := depend.Keys(u.Txn, scriptCatalog)
	lv, wv := depend.Keys(v.Txn, scriptCatalog)
	if wu != depend.ReasonNone || wv != depend.ReasonNone {
		return true
	}
	for _, a := range lu {
		for _, b := range lv {
			if a.Key == b.Key && !(a.Shared && b.Shared) {
				return true
			}
		}
	}
	return false
}

// checkFloor: the floor a commit stores covers only transactions that
// have committed, are skipped, or commit with it.
func checkFloor(a Action, committed, skipped map[int]bool) error {
	floor := a.Pos.Floor.GTIDPos
	if floor == "" {
		return nil
	}
	k, err := strconv.Atoi(floor[strings.LastIndexByte(floor, '-')+1:])
	if err != nil {
		return err
	}
	mine := map[int]bool{}
	for _, m := range a.Unit.Members {
		mine[int(m.SeqNo)] = true
	}
	for i := 1; i <= k; i++ {
		if !committed[i] && !skipped[i] && !mine[i] {
			return fmt.Errorf("%s of %s stores floor %s, but %d has not committed", a.Kind, a.Unit, floor, i)
		}
	}
	return nil
}
