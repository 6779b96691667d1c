package analyze

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

// report turns the accumulators into the report.
func (a *Analyzer) report() *Report {
	r := &Report{Input: a.opt.Input, Summary: a.tot.summary()}
	switch {
	case a.mysql:
		r.Flavor = string(txn.MySQL)
	case a.mariadb:
		r.Flavor = string(txn.MariaDB)
	}
	for _, f := range a.files {
		r.Files = append(r.Files, f.summary())
	}
	if a.mariadb || a.groups.tagged > 0 {
		g := a.groups.report()
		r.GroupCommit = &g
	}
	if a.source.n > 0 {
		st := a.source.stats()
		st.Note = "MySQL's own last_committed/sequence_number; the running maximum restarts with each binlog file"
		r.SourceIntervals = &st
		r.Rotations = &Rotations{Files: len(a.files), ClockRestarts: a.clockRestarts}
		r.Rotations.TxnsPerRestart = float64(a.source.n) / float64(a.clockRestarts+1)
	}
	r.Catalog = a.catalogInfo()
	r.Model = Model{Costs: a.opt.Costs, UnitTxns: a.opt.UnitTxns, CompareUnits: a.opt.CompareUnits, UnitBytes: a.opt.UnitBytes,
		WindowBytes: a.opt.WindowBytes, History: a.opt.History, Workers: a.opt.Workers, FixedWorkers: a.opt.FixedWorkers}
	main := a.sizes[0]
	r.Serial = Serial{Seconds: a.runSeconds(main.serial), Units: main.serial.units, AvgUnit: ratio(float64(main.serial.txns), float64(main.serial.units)),
		PerTxnSeconds: a.perTxnSerial}
	for _, mode := range a.opt.Modes {
		mr := a.modeReport(mode, main, r.Serial.Seconds)
		mr.EngineGap = engineGap(mr, r.Serial, a.opt, a.tot)
		r.Modes = append(r.Modes, mr)
	}
	if len(a.sizes) > 1 {
		for _, us := range a.sizes {
			r.UnitSizes = append(r.UnitSizes, a.unitSizeReport(us, r.Serial.Seconds))
		}
		sort.Slice(r.UnitSizes, func(i, j int) bool { return r.UnitSizes[i].UnitTxns < r.UnitSizes[j].UnitTxns })
	}
	r.Offenders = a.offenderReport()
	r.Offenders.EveryUnit = everyUnit(r.Offenders.HotKeys, r.Summary.Transactions, r.Serial.AvgUnit)
	r.Recommendations = recommend(r)
	r.Assumptions = assumptions(r)
	return r
}

func (a *Analyzer) unitSizeReport(us *unitSize, serial float64) UnitSize {
	r := UnitSize{UnitTxns: us.txns, SerialSeconds: a.runSeconds(us.serial)}
	for _, mode := range a.opt.Modes {
		m := UnitSizeMode{Mode: string(mode), Predictions: a.predictions(us, mode, serial)}
		for _, p := range m.Predictions {
			if p.Speedup > m.Best.Speedup+1e-9 {
				m.Best = p
			}
			m.Units = p.Units
		}
		r.Modes = append(r.Modes, m)
	}
	return r
}

func (a *Analyzer) predictions(us *unitSize, mode depend.Mode, serial float64) []Prediction {
	var out []Prediction
	runs, before := us.modeRuns(mode)
	for i, r := range runs {
		p := Prediction{Workers: r.workers, Seconds: a.runSeconds(r), Reruns: r.reruns, Units: r.units}
		txns, flight := r.txns, r.flight
		if i < len(before) {
			b := before[i]
			flight += b.flight
			p.Seconds += b.seconds()
			p.Reruns += b.reruns
			p.Units += b.units
			txns += b.txns
		}
		p.AvgUnit = ratio(float64(txns), float64(p.Units))
		p.InFlight = ratio(flight, p.Seconds-a.opt.Costs.Start.Seconds())
		p.Speedup = ratio(serial, p.Seconds)
		p.TxnRate = ratio(float64(a.tot.txns), p.Seconds)
		out = append(out, p)
	}
	return out
}

func (a *Analyzer) modeReport(mode depend.Mode, main *unitSize, serial float64) ModeReport {
	mr := ModeReport{Mode: string(mode), Waits: map[string]uint64{}}
	for _, tm := range a.txnModes {
		if tm.mode != mode {
			continue
		}
		mr.Intervals = tm.iv.stats()
		mr.Intervals.Capped = a.opt.History
		mr.Chain = tm.chain.length()
		if mr.Chain > 0 {
			mr.ChainBound = float64(a.tot.txns) / float64(mr.Chain)
		}
		for reason, n := range tm.deps.stats() {
			mr.Waits[string(reason)] = n
		}
	}
	mr.Predictions = a.predictions(main, mode, serial)
	for _, p := range mr.Predictions {
		if p.Speedup > mr.Best.Speedup+1e-9 {
			mr.Best = p
		}
	}
	return mr
}

// runSeconds is the predicted time of a whole run: the simulated apply
// and the fixed start (Costs.Start).
func (a *Analyzer) runSeconds(r *sim) float64 { return r.seconds() + a.opt.Costs.Start.Seconds() }

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

func (a *Analyzer) catalogInfo() CatalogInfo {
	ci := CatalogInfo{Source: a.opt.CatalogSource}
	for _, m := range a.meta.tables {
		s, n := m.src.Schema, m.src.Name
		ci.Tables++
		fromServer := a.cat.fromPrimary(s, n)
		if fromServer {
			ci.FromServer++
		}
		def, _ := a.cat.Table(s, n)
		switch {
		case def != nil && len(def.Indexes) > 0:
		case fromServer || m.keyKnown:
			ci.NoKey++
		default:
			ci.KeyUnknown++
		}
	}
	return ci
}

func (a *Analyzer) offenderReport() Offenders {
	k := a.opt.Top
	o := Offenders{
		DDL:              a.offenders[catDDL].top(k),
		Statements:       a.offenders[catStatement].top(k),
		NoKeyTables:      a.offenders[catNoKey].top(k),
		KeyUnknownTables: a.offenders[catNoKeyInfo].top(k),
		FKParents:        a.offenders[catFKParent].top(k),
		TriggerTables:    a.offenders[catTrigger].top(k),
		NonTransactional: a.offenders[catNonTransactional].top(k),
		UnknownTables:    a.offenders[catUnknownTable].top(k),
		XA:               a.tot.xa,
		HotKeyWindow:     a.opt.HotWindow,
		HotKeyChanges:    a.hot.hh.total,
		Largest:          a.largest.sorted(),
		BigBytes:         a.opt.BigBytes,
		MultiSchema:      a.multiSchema,
	}
	for _, h := range a.hot.hh.top(k) {
		o.HotKeys = append(o.HotKeys, Offender{Name: h.name, Transactions: h.count})
	}
	for _, f := range a.fkRefs.top(k) {
		if f.Waits > 0 {
			o.ForeignKeys = append(o.ForeignKeys, f)
		}
	}
	return o
}

// everyUnit returns the hot keys changed at least once per commit unit of
// avgUnit transactions on average, over txns transactions.
func everyUnit(hot []Offender, txns uint64, avgUnit float64) []Offender {
	var out []Offender
	for _, h := range hot {
		if h.Transactions > 0 && avgUnit >= 2 && float64(h.Transactions)*avgUnit >= float64(txns) {
			out = append(out, h)
		}
	}
	return out
}

// assumptions states what the prediction takes for granted.
func assumptions(r *Report) []string {
	out := []string{
		fmt.Sprintf("Each prediction drives the apply engine's own rules (package sequencer) with a simulated clock: commit units formed as the engine forms them (up to %d transactions and %s; a unit grows while the workers are busy, at the pace of prepl's reader, and is sealed early when a worker waits and the source is quiet, or after the engine's longest wait), admission within %s and 64 units per worker, the DDL barrier, which unit starts on which worker, commit order, retries and yields are the engine's decisions.",
			r.Model.UnitTxns, fmtBytes(float64(r.Model.UnitBytes)), fmtBytes(float64(r.Model.WindowBytes))),
		"Units commit one at a time and in source order within a commit-order key: one key in most modes; one per schema or GTID domain in those modes, which commit out of order across them. A worker holds its unit until it has committed.",
		fmt.Sprintf("Cost model: %s. A unit's work is its statements and rows as the engine sends them (with compaction: its net effect per table as multi-row statements) plus its bytes; it shares the target's cores with the other running units (and with prepl's own CPU when prepl runs on the target's machine); commits do not overlap within a key.", r.Model.Costs.String()),
		"Optimistic mode: a unit started before the units it shares a row with (writeset) have committed meets their locks; even odds: it waits for those commits, then does half its work again, or the next unit to commit stalls for the conflict stall and the unit fails and is retried when it is next to commit (the engine's retry).",
		"Domain mode is simulated from the first transaction of a second GTID domain on (before it, it is the same as writeset).",
		fmt.Sprintf("Intervals (AMIL) and critical paths look for dependencies %d transactions back; one further back counts as one on the transaction that far back. The simulations have no such limit.", r.Model.History),
		"Speedups are against prepl's serial apply (replay/replicate --workers 0) with the same commit unit size. Not modelled: the network, the parallelism of prepl's own CPU (one pipeline stage), the target's buffer pool misses, retries other than row conflicts.",
	}
	if r.Catalog.FromServer < r.Catalog.Tables {
		out = append(out, "Tables defined by the binlog's metadata only: unique secondary keys, foreign keys and triggers are unknown, so their conflicts are not counted; a table whose primary key the metadata does not give conflicts table-wide.")
	}
	return out
}

// sortedReasons lists a wait map's reasons, most waits first.
func sortedReasons(m map[string]uint64) []string {
	var out []string
	for r, n := range m {
		if n > 0 {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if m[out[i]] != m[out[j]] {
			return m[out[i]] > m[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// best returns the mode with the largest predicted speedup at any worker
// count, with that prediction.
func (r *Report) best() (ModeReport, Prediction) {
	var bm ModeReport
	var bp Prediction
	for _, m := range r.Modes {
		for _, p := range m.Predictions {
			if p.Speedup > bp.Speedup+1e-9 || (bm.Mode == "" && p.Speedup > 0) {
				bm, bp = m, p
			}
		}
	}
	return bm, bp
}

// enough returns the fewest workers reaching 90% of mode's best speedup.
func (m ModeReport) enough() Prediction {
	var top float64
	for _, p := range m.Predictions {
		top = max(top, p.Speedup)
	}
	ps := slices.Clone(m.Predictions)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Workers < ps[j].Workers })
	for _, p := range ps {
		if p.Speedup >= 0.9*top {
			return p
		}
	}
	return Prediction{}
}

// engineGap explains, with the simulation's numbers, why the speedup the
// engine gets from workers (the best prediction) is well below the
// parallelism the binlog's dependencies hold (the critical-path bound):
// they measure different things, and the report shows both.
func engineGap(m ModeReport, serial Serial, o Options, tot totals) string {
	p := m.Best
	if p.Seconds <= 0 || m.ChainBound < 1.2 || p.Speedup >= 0.8*m.ChainBound {
		return ""
	}
	var why []string
	if serial.PerTxnSeconds > 1.2*serial.Seconds {
		why = append(why, fmt.Sprintf("the baseline already saves commits: serial apply with commit units of %d takes %s, against %s committing every transaction, and the bound counts transactions, not commits",
			o.UnitTxns, fmtSeconds(serial.Seconds), fmtSeconds(serial.PerTxnSeconds)))
	}
	commits := float64(p.Units) * o.Costs.Commit.Seconds()
	if commits >= 0.2*p.Seconds {
		w := fmt.Sprintf("commits are paid one at a time in source order: %s units x %s = %s of the %s predicted with %d workers",
			fmtCount(p.Units), fmtDur(o.Costs.Commit), fmtSeconds(commits), fmtSeconds(p.Seconds), p.Workers)
		if p.AvgUnit < 0.8*serial.AvgUnit {
			w += fmt.Sprintf(" (units of %.0f transactions, against %.0f on one worker: a worker waiting for work makes the engine seal the unit being formed)", p.AvgUnit, serial.AvgUnit)
		}
		why = append(why, w)
	}
	if c := o.Costs.Cores; c > 0 && float64(p.Workers) > c {
		why = append(why, fmt.Sprintf("the target runs about %.1f units at full speed at once", c))
	}
	if read := float64(tot.txns)*o.Costs.ReadTxn.Seconds() + float64(tot.bytes)/1024*o.Costs.ReadKiB.Seconds(); read >= 0.5*p.Seconds {
		why = append(why, fmt.Sprintf("prepl's reader needs %s to deliver the binlog", fmtSeconds(read)))
	}
	if p.Reruns > 0 {
		why = append(why, fmt.Sprintf("%s units meet row locks of units before them and wait or run again", fmtCount(p.Reruns)))
	}
	if most := m.Predictions[len(m.Predictions)-1]; !o.FixedWorkers && most.Workers > 1 && most.InFlight < 0.5*float64(most.Workers) {
		why = append(why, fmt.Sprintf("the engine's controller kept %.1f units in flight on average with %d workers: it starts at one and adds more only once they measure faster, which they did not, or not before the end",
			most.InFlight, most.Workers))
	}
	if len(why) == 0 {
		why = append(why, "units wait for the units their transactions depend on, a whole unit at a time")
	}
	return strings.Join(why, "; ")
}

// FillFiles gives a line of no transactions to each file of files (the
// paths given, in the order read) that lies between two files of fs but
// started no transaction: a relay log rotates inside transactions, so a
// file can hold nothing but the middle of one. Files before the first
// transaction analyzed or after the last are left out (a start or stop
// position skipped them).
func FillFiles(fs []FileSummary, files []string) []FileSummary {
	at := map[string]int{}
	for i, f := range fs {
		at[f.File] = i
	}
	first, last := -1, -1
	for i, p := range files {
		if _, ok := at[filepath.Base(p)]; ok {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return fs
	}
	out := make([]FileSummary, 0, len(fs))
	seen := map[string]bool{}
	for _, p := range files[first : last+1] {
		name := filepath.Base(p)
		if seen[name] {
			continue
		}
		seen[name] = true
		if i, ok := at[name]; ok {
			out = append(out, fs[i])
		} else {
			out = append(out, FileSummary{File: name})
		}
	}
	for _, f := range fs { // any not among files keeps its line
		if !seen[f.File] {
			out = append(out, f)
		}
	}
	return out
}
