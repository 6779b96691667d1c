package analyze

// Report is everything analyze found, in the form --json prints it. Times
// are in seconds; sizes in bytes.
type Report struct {
	Input   []string `json:"input"`  // files, or the source URL
	Flavor  string   `json:"flavor"` // mariadb or mysql
	Partial string   `json:"partial,omitempty"`
	// Warnings are problems of the input that do not stop the analysis.
	Warnings []string `json:"warnings,omitempty"`

	Summary Summary       `json:"summary"`
	Files   []FileSummary `json:"files"`
	// GroupCommit is set for a MariaDB binlog (commit_id).
	GroupCommit *GroupCommit `json:"group_commit,omitempty"`
	// SourceIntervals is set for a MySQL binlog (last_committed and
	// sequence_number): the tutorial's AMIL of the source's own intervals.
	SourceIntervals *IntervalStats `json:"source_intervals,omitempty"`
	Rotations       *Rotations     `json:"rotations,omitempty"`

	Catalog CatalogInfo  `json:"catalog"`
	Model   Model        `json:"model"`
	Serial  Serial       `json:"serial"`
	Modes   []ModeReport `json:"modes"`
	// UnitSizes compares the apply with other commit unit sizes
	// (--compare-units), the main one included; speedups are against
	// Serial.Seconds, the serial apply with the main unit size.
	UnitSizes []UnitSize `json:"unit_sizes,omitempty"`

	Offenders       Offenders `json:"offenders"`
	Recommendations []string  `json:"recommendations"`
	Assumptions     []string  `json:"assumptions"`
}

// Rotations is what MySQL binlog rotations cost the logical clock: its
// sequence numbers restart with each file, so nothing of a file may run
// with anything of the one before.
type Rotations struct {
	Files          int     `json:"files"`
	ClockRestarts  uint64  `json:"clock_restarts"`
	TxnsPerRestart float64 `json:"txns_per_restart"`
}

// CatalogInfo says where table definitions came from.
type CatalogInfo struct {
	Source     string `json:"source"`      // "binlog metadata", or the server
	Tables     int    `json:"tables"`      // tables seen in row changes
	FromServer int    `json:"from_server"` // of them, defined by the server catalog
	NoKey      int    `json:"no_key"`      // without a primary or unique key
	KeyUnknown int    `json:"key_unknown"` // binlog metadata without keys (not FULL) and no server definition
}

// Model is the cost model and the engine settings the prediction uses.
type Model struct {
	Costs        Costs `json:"costs"`
	UnitTxns     int   `json:"commit_unit_txns"`
	CompareUnits []int `json:"compare_units,omitempty"`
	UnitBytes    int   `json:"commit_unit_bytes"`
	WindowBytes  int   `json:"window_bytes"`
	History      int   `json:"history"` // dependencies are looked for this many transactions (units) back
	Workers      []int `json:"workers"`
	// FixedWorkers: the predictions keep Workers units in flight (as
	// --fixed-workers); else the engine's controller chooses.
	FixedWorkers bool `json:"fixed_workers,omitempty"`
}

// Serial is the baseline: applying on one connection.
type Serial struct {
	// Seconds applying unit by unit (commit units of UnitTxns): prepl
	// --workers 0, the baseline of every speedup.
	Seconds float64 `json:"seconds"`
	Units   uint64  `json:"units"`
	AvgUnit float64 `json:"avg_unit_txns"`
	// PerTxnSeconds commits every source transaction on its own (commit
	// unit 1, like --keep-gtid or a native replica without group commit).
	PerTxnSeconds float64 `json:"per_txn_commit_seconds"`
}

// ModeReport is the parallelism of the binlog under one dependency mode.
type ModeReport struct {
	Mode string `json:"mode"`
	// Intervals from prepl's own dependencies of each transaction in this
	// mode, measured as the tutorial's AMIL.
	Intervals IntervalStats `json:"intervals"`
	// Chain is the critical path in transactions: the longest chain of
	// transactions each waiting for the one before. Transactions / Chain
	// bounds the speedup of any number of workers.
	Chain      uint64  `json:"critical_path_txns"`
	ChainBound float64 `json:"critical_path_bound"`
	// Waits counts, by reason, the transactions that had to wait for an
	// earlier one within the history; a barrier (DDL, untagged
	// transaction in commit-order mode...) counts once, itself, and not
	// the transactions after it.
	Waits       map[string]uint64 `json:"waits"`
	Predictions []Prediction      `json:"predictions"`
	Best        Prediction        `json:"best"` // the prediction with the largest speedup
	// EngineGap says why the speedup prepl's engine gets from workers
	// (Best, simulated) is well below the parallelism the binlog's
	// dependencies hold (ChainBound), in the simulation's numbers; empty
	// when it is not.
	EngineGap string `json:"engine_gap,omitempty"`
}

// UnitSize is the prediction with one commit unit size.
type UnitSize struct {
	UnitTxns      int            `json:"commit_unit_txns"`
	SerialSeconds float64        `json:"serial_seconds"` // one worker
	Modes         []UnitSizeMode `json:"modes"`
}

// UnitSizeMode is one mode's prediction with a unit size.
type UnitSizeMode struct {
	Mode        string       `json:"mode"`
	Units       uint64       `json:"units"`
	Best        Prediction   `json:"best"`
	Predictions []Prediction `json:"predictions"`
}

// Prediction is the simulated apply of the binlog with some workers.
type Prediction struct {
	Workers int     `json:"workers"`
	Seconds float64 `json:"seconds"`
	Speedup float64 `json:"speedup"` // Serial.Seconds / Seconds
	TxnRate float64 `json:"txn_per_sec"`
	Units   uint64  `json:"units"` // commit units the run formed
	AvgUnit float64 `json:"avg_unit_txns"`
	Reruns  uint64  `json:"reruns,omitempty"` // optimistic: units rolled back and run again
	// InFlight is how many units the engine's controller let run at
	// once, on average over the run (Workers with FixedWorkers): it
	// starts at one and climbs only while more measure faster.
	InFlight float64 `json:"in_flight"`
}

// Offenders names what serializes the binlog.
type Offenders struct {
	DDL              []Offender `json:"ddl"`
	Statements       []Offender `json:"statements"`
	NoKeyTables      []Offender `json:"no_key_tables"`
	KeyUnknownTables []Offender `json:"key_unknown_tables"`
	FKParents        []Offender `json:"foreign_key_parents"`
	TriggerTables    []Offender `json:"trigger_tables"`
	NonTransactional []Offender `json:"non_transactional_tables"`
	UnknownTables    []Offender `json:"unknown_tables"`
	XA               uint64     `json:"xa"`
	// HotKeys are the rows changed most often by transactions close
	// enough to be in flight together; Transactions counts those changes.
	HotKeys       []Offender `json:"hot_keys"`
	HotKeyWindow  int        `json:"hot_key_window"`
	HotKeyChanges uint64     `json:"hot_key_changes"` // all such changes, of every row
	// EveryUnit are the hot keys changed in nearly every commit unit:
	// at least once per unit of the serial run on average (their
	// changes times its transactions per unit reach the binlog's
	// transactions). In writeset mode every unit waits for the one
	// before it on them.
	EveryUnit []Offender `json:"hot_keys_every_unit,omitempty"`
	// ForeignKeys are the foreign keys through which transactions
	// referenced a parent row one of the HotKeyWindow transactions before
	// them changed (Waits; Transactions: all with a reference through
	// the key): the writeset tracker holds a reference as the parent's
	// row key, shared, so they wait for that change when in flight with
	// it, though they do not change the parent row. Only keys with such
	// references are listed; none without a catalog that has them.
	ForeignKeys []Offender `json:"foreign_keys_to_changed_rows,omitempty"`
	// Largest are the biggest transactions; Big marks those at least
	// BigBytes.
	Largest  []BigTxn `json:"largest"`
	BigBytes int      `json:"big_bytes"`
	// MultiSchema counts transactions touching several schemas: barriers
	// in schema mode.
	MultiSchema uint64 `json:"multi_schema"`
}

// Prediction returns the prediction of mode with w workers.
func (r *Report) Prediction(mode string, w int) (Prediction, bool) {
	for _, m := range r.Modes {
		if m.Mode != mode {
			continue
		}
		for _, p := range m.Predictions {
			if p.Workers == w {
				return p, true
			}
		}
	}
	return Prediction{}, false
}

// Mode returns the report of mode.
func (r *Report) Mode(mode string) (ModeReport, bool) {
	for _, m := range r.Modes {
		if m.Mode == mode {
			return m, true
		}
	}
	return ModeReport{}, false
}
