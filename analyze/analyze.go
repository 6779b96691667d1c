// Package analyze measures how much parallelism a row-based binlog holds
// before anything is applied: group commit sizes and MySQL intervals (the
// AMIL of ../shared/seeds/mysql-mariadb-parallel-replication-tutorial.txt),
// the same recomputed on prepl's own dependencies for each mode, the
// critical path, what serializes it (by name), and the speedup to expect
// from 1 to 64 workers, by simulating the apply engine's scheduler on the
// real dependency graph with a cost model.
//
// It streams: Add takes transactions in binlog order and keeps only
// windows (the dependency history, the scheduler's window), histograms and
// top-K counters, so a binlog of many gigabytes is analyzed in bounded
// memory. It does no I/O; the caller reads the binlog and writes the
// report.
//
//	a := analyze.New(analyze.Options{})
//	for each transaction tx { a.Add(tx) }
//	rep := a.Finish()
//	rep.WriteText(os.Stdout)
package analyze

import (
	"fmt"
	"slices"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/txn"
)

// DefaultWorkers are the worker counts predicted by default.
var DefaultWorkers = []int{1, 2, 4, 8, 16, 32, 64}

// DefaultModes are the modes predicted by default.
var DefaultModes = []depend.Mode{depend.CommitOrder, depend.Writeset, depend.Optimistic, depend.Schema, depend.Domain}

// Options configure an analysis; zero values take the defaults.
type Options struct {
	Workers []int         // worker counts to predict (DefaultWorkers)
	Modes   []depend.Mode // modes to predict (DefaultModes)
	// UnitTxns and UnitBytes bound a commit unit as the apply engine's
	// --commit-unit does (sequencer.DefaultUnitTxns transactions;
	// sequencer.DefaultUnitBytes of the window).
	UnitTxns  int
	UnitBytes int
	// CompareUnits are other commit unit sizes to predict, to compare
	// with UnitTxns (none by default).
	CompareUnits []int
	// WindowBytes is the engine's read-ahead window
	// (sequencer.DefaultWindowBytes).
	WindowBytes int
	// FixedWorkers predicts replay/replicate --fixed-workers: Workers
	// units in flight all along. By default, as in the engine, Workers is
	// a ceiling and the sequencer's controller chooses the concurrency
	// from the throughput it measures.
	FixedWorkers bool
	Costs        Costs // zero fields take DefaultCosts
	// Shape is how the engine sends a unit (PlainShape: one statement per
	// change); the CLI gives the engine's compaction.
	Shape Shaper
	// Catalog defines tables better than the binlog's metadata (a server's
	// information_schema: unique keys, foreign keys, triggers); tables it
	// does not know come from the binlog's table maps. nil: binlog only.
	Catalog       txn.Catalog
	CatalogSource string // names Catalog in the report
	Top           int    // offenders listed per kind (DefaultTop)
	BigBytes      int    // a transaction at least this big is big (DefaultBigBytes)
	// History is how far back the intervals and critical paths look for
	// dependencies, in transactions (DefaultHistory): a dependency further back
	// counts as one on the transaction History back, which caps intervals.
	// The simulated runs have no such limit.
	History int
	// HotWindow: a row changed again within this many transactions is a
	// conflict (DefaultHotWindow).
	HotWindow int
	Input     []string // what was read, for the report
}

// Defaults of Options.
const (
	DefaultTop       = 10      // offenders listed per kind
	DefaultBigBytes  = 1 << 20 // a transaction at least this big is big
	DefaultHistory   = 256     // transactions looked back for dependencies
	DefaultHotWindow = 1000    // transactions within which a row changed again is a conflict
)

func (o Options) withDefaults() Options {
	if len(o.Workers) == 0 {
		o.Workers = DefaultWorkers
	}
	if len(o.Modes) == 0 {
		o.Modes = DefaultModes
	}
	if o.UnitTxns <= 0 {
		o.UnitTxns = sequencer.DefaultUnitTxns
	}
	if o.WindowBytes <= 0 {
		o.WindowBytes = sequencer.DefaultWindowBytes
	}
	if o.UnitBytes <= 0 {
		o.UnitBytes = sequencer.DefaultUnitBytes(o.WindowBytes)
	}
	if o.Top <= 0 {
		o.Top = DefaultTop
	}
	if o.BigBytes <= 0 {
		o.BigBytes = DefaultBigBytes
	}
	if o.History <= 0 {
		o.History = DefaultHistory
	}
	if o.HotWindow <= 0 {
		o.HotWindow = DefaultHotWindow
	}
	if o.CatalogSource == "" {
		o.CatalogSource = "binlog metadata (table map events)"
	}
	o.Costs = o.Costs.withDefaults()
	if o.Shape == nil {
		o.Shape = PlainShape
	}
	return o
}

// Analyzer accumulates the analysis of one binlog stream.
type Analyzer struct {
	opt     Options
	meta    *MetadataCatalog
	cat     layeredCatalog
	lastSeq uint64
	mysql   bool // MySQL logical clock seen
	mariadb bool // MariaDB GTID tags seen

	tot    totals
	groups groupAcc
	files  []*fileAcc
	fileIx map[string]int
	cur    int // index of the current file

	source        intervalAcc // MySQL's own intervals
	clockSN       int64
	clockFile     string
	clockRestarts uint64

	txnModes []*txnMode
	ws       *txnMode    // writeset at transaction level: offenders, per-file intervals
	sizes    []*unitSize // sizes[0] is UnitTxns

	perTxnSerial float64
	hot          *hotKeys
	fkTargets    map[*txn.ForeignKeyDef]*fkTarget
	fkBuf        []fkRef
	fkRefs       nameCounts // per foreign key: transactions referencing through it, and to a row changed shortly before
	offenders    [numCategories]nameCounts
	largest      largest[BigTxn]
	multiSchema  uint64
}

// txnMode tracks one mode's dependencies transaction by transaction.
type txnMode struct {
	mode  depend.Mode
	deps  *depStream[txnItem]
	iv    intervalAcc
	chain *chainAcc
	keys  orderKeys
}

type txnItem struct {
	file   int
	attrs  []attribution
	name   string
	key    int  // commit-order key, interned
	global bool // waits for every transaction before it (schema mode barrier)
}

// New returns an analyzer.
func New(opt Options) *Analyzer {
	opt = opt.withDefaults()
	a := &Analyzer{opt: opt, meta: NewMetadataCatalog(), fileIx: map[string]int{}, cur: -1, clockSN: -1,
		hot: newHotKeys(opt.HotWindow, 1024), fkTargets: map[*txn.ForeignKeyDef]*fkTarget{}}
	a.cat = layeredCatalog{primary: opt.Catalog, meta: a.meta}
	a.largest.k = opt.Top

	modes := slices.Clone(opt.Modes)
	if !slices.Contains(modes, depend.Writeset) {
		modes = append(modes, depend.Writeset) // offenders and optimistic conflicts need it
	}
	for _, m := range modes {
		tm := &txnMode{mode: m, chain: newChainAcc(opt.History + 2)}
		tm.deps = newDepStream(m, txn.Catalog(a.cat), opt.History, func(it *depItem[txnItem]) { a.txnEmitted(tm, it) })
		a.txnModes = append(a.txnModes, tm)
		if m == depend.Writeset {
			a.ws = tm
		}
	}

	for _, n := range append([]int{opt.UnitTxns}, opt.CompareUnits...) {
		if !slices.ContainsFunc(a.sizes, func(s *unitSize) bool { return s.txns == n }) {
			a.sizes = append(a.sizes, a.newUnitSize(n))
		}
	}
	return a
}

// orderKeys interns commit-order keys (depend.OrderKey) as small numbers.
type orderKeys map[string]int

func (k *orderKeys) id(key string) int {
	if *k == nil {
		*k = orderKeys{}
	}
	id, ok := (*k)[key]
	if !ok {
		id = len(*k)
		(*k)[key] = id
	}
	return id
}

// unitSize is the prediction of the apply with one commit unit size: a
// simulated run per mode and worker count, and the serial baseline.
//
// Domain mode is the same as writeset as long as every transaction is in
// one GTID domain (the same units, dependencies and commit order), so it
// is only simulated from the first transaction of a second domain on. At
// that transaction the writeset runs are finished (drained) and restarted,
// and both modes' times are the writeset time up to there plus their own:
// one pipeline drain more than the real runs, once.
type unitSize struct {
	txns   int
	opt    Options
	cat    txn.Catalog
	shapes *shapeCache
	serial *sim
	runs   map[depend.Mode][]*sim // by mode, in Workers order

	domain      bool // domain mode is asked for
	firstDomain uint32
	seen        bool
	before      map[depend.Mode][]*sim // runs up to a second domain
}

func (a *Analyzer) newUnitSize(n int) *unitSize {
	us := &unitSize{txns: n, opt: a.opt, cat: a.cat, runs: map[depend.Mode][]*sim{}}
	us.opt.UnitTxns = n
	us.shapes = newShapeCache(a.opt.Shape, a.cat, n+4*channelSize)
	us.serial = newSim(depend.Serial, 1, &us.opt, a.cat, us.shapes)
	modes := a.opt.Modes
	if slices.Contains(modes, depend.Domain) {
		us.domain = true
		modes = slices.DeleteFunc(slices.Clone(modes), func(m depend.Mode) bool { return m == depend.Domain })
		if !slices.Contains(modes, depend.Writeset) {
			modes = append(modes, depend.Writeset)
		}
	}
	for _, m := range modes {
		us.runs[m] = us.newRuns(m)
	}
	return us
}

func (us *unitSize) newRuns(m depend.Mode) []*sim {
	var rs []*sim
	for _, w := range us.opt.Workers {
		rs = append(rs, newSim(m, w, &us.opt, us.cat, us.shapes))
	}
	return rs
}

func (us *unitSize) push(tx *txn.Txn) {
	if us.domain && us.runs[depend.Domain] == nil {
		if !us.seen {
			us.firstDomain, us.seen = tx.Domain, true
		} else if tx.Domain != us.firstDomain {
			before := us.runs[depend.Writeset]
			for _, r := range before {
				r.end()
			}
			us.before = map[depend.Mode][]*sim{depend.Writeset: before, depend.Domain: before}
			us.runs[depend.Writeset] = us.newRuns(depend.Writeset)
			us.runs[depend.Domain] = us.newRuns(depend.Domain)
		}
	}
	us.serial.push(tx)
	for _, rs := range us.runs {
		for _, r := range rs {
			r.push(tx)
		}
	}
}

// modeRuns returns the runs of mode m, and the runs before them (up to a
// second domain) whose time and units add to theirs.
func (us *unitSize) modeRuns(m depend.Mode) (runs, before []*sim) {
	if m == depend.Domain && us.runs[depend.Domain] == nil {
		m = depend.Writeset // one domain: the same runs
	}
	return us.runs[m], us.before[m]
}

func (us *unitSize) end() {
	us.serial.end()
	for _, rs := range us.runs {
		for _, r := range rs {
			r.end()
		}
	}
}

// Add analyzes the next transaction of the stream. Seq must increase from
// one call to the next, as the binlog readers number them.
func (a *Analyzer) Add(tx *txn.Txn) {
	if tx.Seq <= a.lastSeq {
		panic(fmt.Sprintf("analyze: Add(seq %d) after seq %d: transactions must come in stream order", tx.Seq, a.lastSeq))
	}
	a.lastSeq = tx.Seq
	a.meta.Observe(tx)
	if tx.SequenceNumber >= 0 && tx.LastCommitted >= 0 {
		a.mysql = true
	}
	if tx.CommitID != 0 || tx.Flags != 0 {
		a.mariadb = true
	}

	f := a.file(tx.Start.File)
	a.tot.add(tx, a.opt.BigBytes)
	f.tot.add(tx, a.opt.BigBytes)
	a.groups.add(tx)
	f.groups.add(tx)
	a.sourceInterval(tx, f)

	work := a.opt.Costs.txnWork(tx, a.opt.Shape, a.cat)
	a.perTxnSerial += work + a.opt.Costs.Commit.Seconds()
	if len(depend.Schemas(tx)) > 1 {
		a.multiSchema++
	}
	a.foreignKeys(tx)
	a.hot.add(tx.Seq, a.hot.rowKeys(tx, a.cat))
	if a.largest.wouldKeep(float64(tx.Size)) {
		a.largest.add(float64(tx.Size), BigTxn{GTID: tx.GTID, Seq: tx.Seq, Bytes: tx.Size, Rows: tx.Rows(),
			Position: tx.Start.String(), Time: tx.Timestamp, Tables: tablesOf(tx, 3), Seconds: work,
			Big: tx.Size >= a.opt.BigBytes})
	}

	item := txnItem{file: a.cur, attrs: attribute(tx, a.cat), name: txnName(tx)}
	for _, m := range a.txnModes {
		it := txnItem{file: a.cur}
		if m == a.ws {
			it = item
		}
		b := barrierIn(m.mode, tx, a.cat)
		it.key = m.keys.id(depend.OrderKey(m.mode, tx))
		it.global = m.mode == depend.Schema && b != depend.ReasonNone
		m.deps.add(tx, it, b)
	}
	for _, us := range a.sizes {
		us.push(tx)
	}
}

// foreignKeys counts, per foreign key, the transactions with a reference
// through it and, of them, those referencing a parent row one of the
// HotWindow transactions before changed: those the writeset tracker makes
// wait for that change when both are in flight.
func (a *Analyzer) foreignKeys(tx *txn.Txn) {
	a.fkBuf = references(tx, a.cat, a.fkTargets, a.fkBuf)
	refs := a.fkBuf
	for i := 0; i < len(refs); {
		j, hot := i, false
		for ; j < len(refs) && refs[j].fk == refs[i].fk; j++ {
			hot = hot || a.hot.recent(refs[j].row, tx.Seq)
		}
		a.fkRefs.add(refs[i].fk, hot, txnName(tx))
		i = j
	}
}

// Transactions counts the transactions added so far.
func (a *Analyzer) Transactions() uint64 { return a.tot.txns }

// file switches to the accumulator of the binlog file name.
func (a *Analyzer) file(name string) *fileAcc {
	if a.cur >= 0 && a.files[a.cur].name == name {
		return a.files[a.cur]
	}
	if a.cur >= 0 {
		a.files[a.cur].groups.close()
	}
	i, ok := a.fileIx[name]
	if !ok {
		i = len(a.files)
		a.fileIx[name] = i
		a.files = append(a.files, &fileAcc{name: name})
	}
	a.cur = i
	return a.files[i]
}

// sourceInterval accumulates MySQL's own interval of tx, restarting the
// running maximum where the logical clock restarts (a new binlog file).
func (a *Analyzer) sourceInterval(tx *txn.Txn, f *fileAcc) {
	if tx.SequenceNumber < 0 || tx.LastCommitted < 0 {
		return
	}
	restart := a.clockSN < 0 || tx.SequenceNumber <= a.clockSN || tx.LastCommitted >= tx.SequenceNumber ||
		(tx.Start.File != "" && a.clockFile != "" && tx.Start.File != a.clockFile)
	if restart {
		if a.clockSN >= 0 {
			a.clockRestarts++
		}
		a.source.reset()
		f.source.reset()
	}
	a.clockSN, a.clockFile = tx.SequenceNumber, tx.Start.File
	a.source.add(tx.LastCommitted, tx.SequenceNumber)
	f.source.add(tx.LastCommitted, tx.SequenceNumber)
}

// txnEmitted receives a transaction's dependency in mode m.
func (a *Analyzer) txnEmitted(m *txnMode, it *depItem[txnItem]) {
	l := m.iv.add(int64(it.lc), int64(it.idx))
	m.chain.add(it.lc, it.data.key, it.data.global)
	if m != a.ws {
		return
	}
	if it.data.file >= 0 && it.data.file < len(a.files) {
		a.files[it.data.file].writeset.addLen(l)
	}
	for _, at := range it.data.attrs {
		a.offenders[at.cat].add(at.name, it.reason == at.reason, it.data.name)
	}
}

// Finish completes the analysis and returns the report. The analyzer must
// not be used after.
func (a *Analyzer) Finish() *Report {
	if a.cur >= 0 {
		a.files[a.cur].groups.close()
	}
	for _, m := range a.txnModes {
		m.deps.finish()
	}
	for _, us := range a.sizes {
		us.end()
	}
	return a.report()
}
