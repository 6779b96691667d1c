package analyze

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

// TestPredictedSpeedups: end to end on hand-built binlogs whose parallelism
// is known, with one transaction per unit and costs only for rows.
func TestPredictedSpeedups(t *testing.T) {
	const n = 64
	mk := func(f func(g *gen, i int) *txn.Txn) []*txn.Txn {
		var g gen
		var out []*txn.Txn
		for i := range n {
			out = append(out, f(&g, i))
		}
		return out
	}
	independent := mk(func(g *gen, i int) *txn.Txn { return g.txn(upd(tblT, int64(i))) })
	sameRow := mk(func(g *gen, i int) *txn.Txn { return g.txn(upd(tblT, 7)) })
	noKey := mk(func(g *gen, i int) *txn.Txn { return g.txn(upd(tblNoPK, int64(i))) })
	groupsOf8 := mk(func(g *gen, i int) *txn.Txn {
		tx := g.txn(upd(tblT, int64(i)))
		tx.CommitID = uint64(100 + i/8)
		return tx
	})
	twoDomains := mk(func(g *gen, i int) *txn.Txn { // one hot row per domain
		tx := g.txn(upd(tblT, int64(i%2)))
		tx.Domain = uint32(i % 2)
		return tx
	})
	lateDomain := mk(func(g *gen, i int) *txn.Txn { // domain 1 appears half-way
		tx := g.txn(upd(tblT, int64(i%2)))
		if i >= n/2 {
			tx.Domain = uint32(i % 2)
		}
		return tx
	})
	twoSchemas := mk(func(g *gen, i int) *txn.Txn {
		if i%2 == 0 {
			return g.txn(upd(tblT, 1))
		}
		return g.txn(upd(tblU, 1))
	})

	cases := []struct {
		name    string
		txs     []*txn.Txn
		mode    string
		workers int
		lo, hi  float64
	}{
		{"independent, writeset, 1 worker", independent, "writeset", 1, 0.99, 1.01},
		{"independent, writeset, 8 workers", independent, "writeset", 8, 7.5, 8.01},
		{"independent, writeset, 64 workers", independent, "writeset", 64, 40, 64.01},
		{"independent, untagged commit-order is serial", independent, "commit-order", 8, 0.99, 1.01},
		{"same row, writeset", sameRow, "writeset", 64, 0.99, 1.01},
		{"same row, optimistic reruns", sameRow, "optimistic", 8, 0, 1.01},
		{"same row, schema", sameRow, "schema", 8, 0.99, 1.01},
		{"no key, writeset", noKey, "writeset", 64, 0.99, 1.01},
		{"groups of 8, commit-order, 8 workers", groupsOf8, "commit-order", 8, 7.5, 8.01},
		{"groups of 8, commit-order, 64 workers", groupsOf8, "commit-order", 64, 7.5, 8.01},
		{"two schemas, schema mode, 2 workers", twoSchemas, "schema", 2, 1.9, 2.01},
		{"two domains, domain mode, 2 workers", twoDomains, "domain", 2, 1.9, 2.01},
		{"two domains, one row each, writeset, 2 workers", twoDomains, "writeset", 2, 1.9, 2.01},
		{"one domain: domain is writeset", sameRow, "domain", 8, 0.99, 1.01},
		{"second domain half-way", lateDomain, "domain", 2, 1.8, 2.01},
		{"two schemas, writeset, 2 workers", twoSchemas, "writeset", 2, 1.9, 2.01},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := analyzeAll(Options{UnitTxns: 1, FixedWorkers: true, Costs: fastCommit}, c.txs)
			p, ok := rep.Prediction(c.mode, c.workers)
			if !ok {
				t.Fatalf("no prediction for %s with %d workers", c.mode, c.workers)
			}
			if p.Speedup < c.lo || p.Speedup > c.hi {
				t.Errorf("speedup %.3f, want in [%v, %v]", p.Speedup, c.lo, c.hi)
			}
		})
	}
}

// TestCommitUnits: units of 8 over independent transactions give 8 units
// that run in parallel; over one hot row they serialize.
func TestCommitUnits(t *testing.T) {
	var g gen
	var txs []*txn.Txn
	for i := range 64 {
		txs = append(txs, g.txn(upd(tblT, int64(i))))
	}
	rep := analyzeAll(Options{UnitTxns: 8, FixedWorkers: true, Costs: fastCommit}, txs)
	if p, _ := rep.Prediction("writeset", 8); p.Speedup < 5 || p.Units < 8 {
		t.Errorf("independent transactions on 8 workers: speedup %.2f in %d units", p.Speedup, p.Units)
	}
	// A DDL is a unit of its own and a barrier.
	g = gen{}
	txs = nil
	for i := range 20 {
		if i == 10 {
			txs = append(txs, g.txn(ddl("CREATE TABLE d.x (id INT PRIMARY KEY)")))
			continue
		}
		txs = append(txs, g.txn(upd(tblT, int64(i))))
	}
	rep = analyzeAll(Options{UnitTxns: 8, Costs: fastCommit}, txs)
	if len(rep.Offenders.DDL) != 1 || !strings.Contains(rep.Offenders.DDL[0].Name, "CREATE TABLE d.x") {
		t.Errorf("DDL offenders %+v", rep.Offenders.DDL)
	}
}

// TestMySQLIntervals: a MySQL binlog's own intervals give the tutorial's
// AMIL, restarted at each file; the rotation is counted.
func TestMySQLIntervals(t *testing.T) {
	var g gen
	var txs []*txn.Txn
	for f, file := range []string{"binlog.000001", "binlog.000002"} {
		g.file, g.off = file, 4
		var sn int64
		for range 10 { // groups of 4
			lc := sn
			for range 4 {
				sn++
				tx := g.txn(upd(tblT, int64(g.seq)))
				tx.LastCommitted, tx.SequenceNumber, tx.Flags = lc, sn, 0
				txs = append(txs, tx)
			}
		}
		_ = f
	}
	rep := analyzeAll(Options{UnitTxns: 1, FixedWorkers: true, Costs: fastCommit}, txs)
	s := rep.SourceIntervals
	if s == nil || s.Transactions != 80 || !near(s.AMIL, 2.5, 1e-9) || !near(s.PseudoGroup, 4, 1e-9) {
		t.Fatalf("source intervals %+v, want AMIL 2.5 over 80", s)
	}
	if rep.Rotations == nil || rep.Rotations.ClockRestarts != 1 {
		t.Errorf("rotations %+v, want 1 restart", rep.Rotations)
	}
	if rep.Flavor != "mysql" || rep.GroupCommit != nil {
		t.Errorf("flavor %q group commit %+v", rep.Flavor, rep.GroupCommit)
	}
	co, _ := rep.Mode("commit-order")
	if !near(co.Intervals.PseudoGroup, 4, 0.3) {
		t.Errorf("commit-order recomputed pseudo group %.2f, want about 4", co.Intervals.PseudoGroup)
	}
	if p, _ := rep.Prediction("commit-order", 8); p.Speedup < 3.5 || p.Speedup > 4.01 {
		t.Errorf("commit-order speedup %.2f with groups of 4", p.Speedup)
	}
	if len(files(rep)) != 2 || rep.Files[1].SourceIntervals == nil || !near(rep.Files[1].SourceIntervals.AMIL, 2.5, 1e-9) {
		t.Errorf("per-file intervals %+v", rep.Files)
	}
}

func files(r *Report) []string {
	var out []string
	for _, f := range r.Files {
		out = append(out, f.File)
	}
	return out
}

// TestOffenders names what serializes: tables without a key, tables
// whose keys the metadata does not give, hot rows, big transactions.
func TestOffenders(t *testing.T) {
	var g gen
	var txs []*txn.Txn
	for i := range 200 {
		switch i % 4 {
		case 0:
			txs = append(txs, g.txn(upd(tblNoPK, int64(i))))
		case 1:
			txs = append(txs, g.txn(upd(tblT, 1))) // the hot row
		case 2:
			txs = append(txs, g.txn(upd(tblMin, int64(i))))
		default:
			txs = append(txs, g.txn(upd(tblT, int64(1000+i))))
		}
	}
	big := g.txn(upd(tblT, 5000))
	big.Size = 3 << 20
	txs = append(txs, big)
	rep := analyzeAll(Options{Costs: fastCommit}, txs)
	o := rep.Offenders
	if len(o.NoKeyTables) != 1 || o.NoKeyTables[0].Name != "d.nopk" || o.NoKeyTables[0].Transactions != 50 || o.NoKeyTables[0].Waits < 45 {
		t.Errorf("no-key tables %+v", o.NoKeyTables)
	}
	if len(o.KeyUnknownTables) != 1 || o.KeyUnknownTables[0].Name != "d.minimal" {
		t.Errorf("key-unknown tables %+v", o.KeyUnknownTables)
	}
	if len(o.HotKeys) == 0 || o.HotKeys[0].Name != "d.t (id=1)" || o.HotKeys[0].Transactions != 49 {
		t.Errorf("hot keys %+v", o.HotKeys)
	}
	if len(o.Largest) == 0 || o.Largest[0].GTID != big.GTID || !o.Largest[0].Big || o.Largest[0].Bytes != 3<<20 {
		t.Errorf("largest %+v", o.Largest)
	}
	if rep.Catalog.Tables != 3 || rep.Catalog.NoKey != 1 || rep.Catalog.KeyUnknown != 1 {
		t.Errorf("catalog %+v", rep.Catalog)
	}
	recs := strings.Join(rep.Recommendations, "\n")
	for _, want := range []string{"Add a primary key to d.nopk", "binlog_row_metadata", "Row d.t (id=1)", "Split transaction GTID " + big.GTID} {
		if !strings.Contains(recs, want) {
			t.Errorf("recommendations lack %q:\n%s", want, recs)
		}
	}
}

// TestReportOutputs: text, JSON and HTML render a report.
func TestReportOutputs(t *testing.T) {
	var g gen
	var txs []*txn.Txn
	for i := range 100 {
		tx := g.txn(upd(tblT, int64(i%10)))
		tx.CommitID = uint64(1 + i/5)
		txs = append(txs, tx)
	}
	rep := analyzeAll(Options{Input: []string{"binlog.000001"}}, txs)
	var text, js, html bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"100 transactions", "Group commit (MariaDB commit_id)", "5.00 transactions per group", "Speedup prepl's engine gets from workers", "writeset", "Recommendations", "Assumptions"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := json.NewEncoder(&js).Encode(rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Summary.Transactions != 100 || len(back.Modes) != 5 {
		t.Errorf("JSON round trip: %v %+v", err, back.Summary)
	}
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(html.String(), `src="data:image/png;base64,`); n != 3 {
		t.Errorf("HTML has %d embedded PNG charts, want 3", n)
	}
	if strings.Contains(html.String(), "http://") || strings.Contains(html.String(), "https://") {
		t.Errorf("HTML refers to the network")
	}
}

// TestReportDoesNotContradictItself: a binlog whose dependencies allow
// 10x but which prepl's engine applies no faster with workers (one commit
// unit holds it all) shows both numbers as different things, and says
// why, in the text, the recommendation and the HTML.
func TestReportDoesNotContradictItself(t *testing.T) {
	var g gen
	var txs []*txn.Txn
	for i := range 100 {
		txs = append(txs, g.txn(upd(tblT, int64(i%10))))
	}
	rep := analyzeAll(Options{Input: []string{"binlog.000001"}, Modes: []depend.Mode{depend.Writeset}, Workers: []int{1, 4}}, txs)
	m := rep.Modes[0]
	if m.ChainBound < 5 || m.Best.Speedup > 1.2 {
		t.Fatalf("case does not hold: bound %.1f, engine %.2f", m.ChainBound, m.Best.Speedup)
	}
	if !strings.Contains(m.EngineGap, "the baseline already saves commits") {
		t.Errorf("engine gap %q: want the commit units named", m.EngineGap)
	}
	var text, html bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"text": text.String(), "HTML": html.String(), "recommendations": strings.Join(rep.Recommendations, "\n")} {
		if !strings.Contains(s, "the baseline already saves commits") {
			t.Errorf("%s does not say why the engine gets less than the binlog holds:\n%s", what, s)
		}
	}
	if !strings.Contains(strings.Join(rep.Recommendations, "\n"), "The binlog itself holds more parallelism") {
		t.Errorf("recommendations: %q", rep.Recommendations)
	}
}

// TestEngineGapNamesTheController: a binlog of independent rows allows
// 8x, but its run is too short for the engine's controller to leave one
// unit in flight; the report says so, and with --fixed-workers it does not.
func TestEngineGapNamesTheController(t *testing.T) {
	var g gen
	var txs []*txn.Txn
	for i := range 64 {
		txs = append(txs, g.txn(upd(tblT, int64(i))))
	}
	opt := Options{UnitTxns: 1, Costs: fastCommit, Modes: []depend.Mode{depend.Writeset}, Workers: []int{1, 8}}
	rep := analyzeAll(opt, txs)
	m := rep.Modes[0]
	if p, _ := rep.Prediction("writeset", 8); m.ChainBound < 8 || p.Speedup > 1.01 || p.InFlight > 1.01 {
		t.Fatalf("case does not hold: bound %.1f, engine %.2f with %.1f units in flight", m.ChainBound, p.Speedup, p.InFlight)
	}
	if !strings.Contains(m.EngineGap, "controller kept 1.0 units in flight on average with 8 workers") {
		t.Errorf("engine gap %q: want the controller named", m.EngineGap)
	}
	opt.FixedWorkers = true
	fixed := analyzeAll(opt, txs)
	if p, _ := fixed.Prediction("writeset", 8); p.Speedup < 5 || strings.Contains(fixed.Modes[0].EngineGap, "controller") {
		t.Errorf("fixed workers: speedup %.2f, engine gap %q", p.Speedup, fixed.Modes[0].EngineGap)
	}
}

// TestStartPaidOnce: Costs.Start (a run's cost besides applying) is added
// once to the serial time and to every prediction, also where a second
// GTID domain splits the simulated runs in two.
func TestStartPaidOnce(t *testing.T) {
	var g gen
	var txs []*txn.Txn
	for i := range 64 {
		tx := g.txn(upd(tblT, int64(i%2)))
		if i >= 32 {
			tx.Domain = uint32(i % 2)
		}
		txs = append(txs, tx)
	}
	opt := Options{UnitTxns: 1, Costs: fastCommit, Modes: []depend.Mode{depend.Writeset, depend.Domain}, Workers: []int{1, 2}}
	without := analyzeAll(opt, txs)
	opt.Costs.Start = time.Second
	with := analyzeAll(opt, txs)
	if d := with.Serial.Seconds - without.Serial.Seconds; !near(d, 1, 1e-9) {
		t.Errorf("serial: %.3f s more with a start of 1 s", d)
	}
	for _, m := range []string{"writeset", "domain"} {
		for _, w := range []int{1, 2} {
			a, _ := without.Prediction(m, w)
			b, _ := with.Prediction(m, w)
			if d := b.Seconds - a.Seconds; !near(d, 1, 1e-9) {
				t.Errorf("%s, %d workers: %.3f s more with a start of 1 s", m, w, d)
			}
			if !near(b.Speedup, with.Serial.Seconds/b.Seconds, 1e-9) || !near(b.InFlight, a.InFlight, 1e-9) {
				t.Errorf("%s, %d workers: speedup %.3f, in flight %.2f (without the start %.2f)", m, w, b.Speedup, b.InFlight, a.InFlight)
			}
		}
	}
}
