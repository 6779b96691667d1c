// Package bench is the seeds' catch-up benchmark (tracker issue 4), run
// against real servers: a sandbox source generates a binlog with sysbench,
// then replicas restored from a snapshot taken before the workload catch up
// with it — MariaDB's own parallel replica and prepl side by side — for each
// durability config of the replica and each worker count. Every run is
// timed, then the replica is compared with the source table by table: a
// fast wrong answer is a failure, not a result.
//
// The method is the one of the MariaDB 10.0 benchmark mail and of the MySQL
// 5.6 multi-threaded slave benchmark in ../shared/seeds/: prepare, snapshot,
// generate the binlog once, then for every cell restore the snapshot, fetch
// the relay log first and time only the apply.
package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/prepl/prepl/sandbox"
)

// Workload is a sysbench load that generates the source binlog.
type Workload struct {
	Name string
	// Script is sysbench's bundled Lua script, or the name of the one in
	// Lua.
	Script string
	// Lua is the text of a script kept in the tree (bench/lua/), written
	// to the work directory for sysbench. Such a script sizes its data
	// itself (Config.ScriptArgs), not with --tables and --table-size of
	// sysbench's OLTP scripts.
	Lua []byte
	// DB is the schema the script writes; "" is sysbench's sbtest.
	DB string
	// Serial runs the load with one source thread: a binlog without any
	// group commit parallelism.
	Serial bool
	// CommitWait sets binlog_commit_wait_count=12 and
	// binlog_commit_wait_usec=10000 on the source, as in the MariaDB
	// blog's oltp run: bigger group commits, more for a replica to run in
	// parallel.
	CommitWait bool
}

// Workloads are the three binlogs of the MariaDB 10.0 benchmark.
var Workloads = []Workload{
	{Name: "oltp", Script: "oltp_read_write", CommitWait: true},
	{Name: "update-index", Script: "oltp_update_index"},
	{Name: "update-index-serial", Script: "oltp_update_index", Serial: true},
}

// TPCC is a TPC-C-like workload (bench/lua/tpcc.lua): nine tables with
// foreign keys (NO ACTION), hot district and warehouse rows that every
// new-order and payment updates, wide customer and stock rows, and a
// key-less insert-only history table; 2 warehouses unless ScriptArgs say
// otherwise.
var TPCC = Workload{Name: "tpcc", Script: "tpcc", Lua: tpccLua, DB: "tpcc"}

// ExtraWorkloads are not in the benchmark; --workloads may name them, e.g.
// to check `prepl analyze` predictions on binlogs of other shapes
// (docs/analyze.md).
var ExtraWorkloads = []Workload{
	{Name: "write-only", Script: "oltp_write_only"},
	{Name: "insert", Script: "oltp_insert"},
	TPCC,
}

// ParseWorkload returns the workload called name.
func ParseWorkload(name string) (Workload, error) {
	for _, w := range slices.Concat(Workloads, ExtraWorkloads) {
		if w.Name == strings.TrimSpace(name) {
			return w, nil
		}
	}
	return Workload{}, fmt.Errorf("unknown workload %q (want one of %s)", name, strings.Join(workloadNames(), ", "))
}

func workloadNames() []string {
	var out []string
	for _, w := range slices.Concat(Workloads, ExtraWorkloads) {
		out = append(out, w.Name)
	}
	return out
}

// ReplicaConfig is a durability configuration of the replica or target,
// named as in the seeds' tables.
type ReplicaConfig struct {
	Name        string
	Description string
	Binlog      bool // log_bin with log_slave_updates
	SyncBinlog  int  // -1: server default
	FlushAtTrx  int  // innodb_flush_log_at_trx_commit
	// TargetRatio is the most prepl's best time may be, as a fraction of
	// MariaDB's best, for the target to be met.
	TargetRatio float64
	// BufferPool overrides the sandbox's innodb_buffer_pool_size (e.g.
	// "32M"); IOBound also sets innodb_flush_method=O_DIRECT and starts
	// the replica with an empty buffer pool (no load of the snapshot's
	// pool dump), so that rows not yet read come from the disk.
	BufferPool string
	IOBound    bool
}

// Configs are the seeds' configs A, B and C, and D: A's durability on a
// replica whose data does not fit in its buffer pool (the data set is
// --rows × --tables, which must be at least 8× the pool: the report says
// the ratio measured).
var Configs = []ReplicaConfig{
	{Name: "A", Description: "binlog, log_slave_updates, sync_binlog=1, innodb_flush_log_at_trx_commit=1",
		Binlog: true, SyncBinlog: 1, FlushAtTrx: 1, TargetRatio: 0.5},
	{Name: "B", Description: "no binlog, innodb_flush_log_at_trx_commit=1",
		SyncBinlog: -1, FlushAtTrx: 1, TargetRatio: 0.5},
	{Name: "C", Description: "no binlog, innodb_flush_log_at_trx_commit=2",
		SyncBinlog: -1, FlushAtTrx: 2, TargetRatio: 1},
	{Name: "D", Description: "I/O-bound: A's durability, 32M buffer pool, O_DIRECT, cold",
		Binlog: true, SyncBinlog: 1, FlushAtTrx: 1, BufferPool: "32M", IOBound: true, TargetRatio: 0.5},
}

// ParseConfig returns the config called name (A, B, C or D).
func ParseConfig(name string) (ReplicaConfig, error) {
	n := strings.ToUpper(strings.TrimSpace(name))
	for _, c := range Configs {
		if c.Name == n {
			return c, nil
		}
	}
	return ReplicaConfig{}, fmt.Errorf("unknown config %q (want A, B, C or D)", name)
}

// Durable reports whether every commit reaches the disk.
func (c ReplicaConfig) Durable() bool { return c.FlushAtTrx == 1 }

// options are the sandbox options of a replica restored from snapshot.
func (c ReplicaConfig) options(snapshot string) sandbox.Options {
	o := sandbox.Defaults()
	o.ServerID = 2 // not the source's: a replica skips events of its own server_id
	o.FromDataDir = snapshot
	o.Binlog = c.Binlog
	o.LogSlaveUpdates = c.Binlog
	o.SyncBinlog = c.SyncBinlog
	o.FlushLogAtTrxCommit = c.FlushAtTrx
	if c.BufferPool != "" {
		o.Flags = append(o.Flags, "--innodb-buffer-pool-size="+c.BufferPool)
	}
	if c.IOBound {
		o.Flags = append(o.Flags, "--innodb-flush-method=O_DIRECT", "--innodb-buffer-pool-load-at-startup=OFF")
	}
	return o
}

// PoolBytes is the replica's buffer pool size in bytes (the sandbox's
// 256 MiB unless BufferPool says otherwise).
func (c ReplicaConfig) PoolBytes() int64 {
	s := c.BufferPool
	if s == "" {
		return 256 << 20
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K', 'k':
		mult, s = 1<<10, s[:len(s)-1]
	case 'M', 'm':
		mult, s = 1<<20, s[:len(s)-1]
	case 'G', 'g':
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n * mult
}

// System is what applies the binlog in a run.
type System string

const (
	MariaDB        System = "mariadb"         // MariaDB's own replica (IO thread, then SQL thread timed)
	PreplReplicate System = "prepl-replicate" // prepl replicate --stop-at-end from the live source
	PreplReplay    System = "prepl-replay"    // prepl replay of the source's binlog files
	// PreplKeepGTID is prepl replicate --keep-gtid: one target
	// transaction per source transaction, carrying its GTID.
	PreplKeepGTID System = "prepl-keep-gtid"
	// PreplPrefetch is prepl replicate --prefetch 4: four connections
	// read ahead the index pages of the transactions admitted.
	PreplPrefetch System = "prepl-prefetch"
	// Limit is the physical limit: the target ingesting the same row
	// changes in one stream of large transactions, durability off.
	Limit System = "limit"
)

// Systems that can be asked for on the command line, in table order.
var Systems = []System{MariaDB, PreplReplicate, PreplReplay, PreplKeepGTID, PreplPrefetch}

// ParseSystem returns the system called name.
func ParseSystem(name string) (System, error) {
	s := System(strings.TrimSpace(name))
	if slices.Contains(Systems, s) {
		return s, nil
	}
	return "", fmt.Errorf("unknown system %q (want mariadb, prepl-replicate, prepl-replay, prepl-keep-gtid or prepl-prefetch)", name)
}

// IsPrepl reports whether the system runs the prepl binary.
func (s System) IsPrepl() bool { return s != MariaDB }

// Label is the system's name in tables and charts.
func (s System) Label() string {
	switch s {
	case MariaDB:
		return "MariaDB"
	case PreplReplicate:
		return "prepl"
	case PreplReplay:
		return "prepl replay"
	case PreplKeepGTID:
		return "prepl --keep-gtid"
	case PreplPrefetch:
		return "prepl --prefetch 4"
	case Limit:
		return "physical limit"
	}
	return string(s)
}

// MariaDBModes are the values of slave_parallel_mode the benchmark knows.
var MariaDBModes = []string{"conservative", "optimistic", "aggressive", "minimal"}

// SerialMode labels the threads=0 cell of a system: MariaDB with
// slave_parallel_threads=0, prepl with --workers 0. It is the same run for
// every mode, so it is made once.
const SerialMode = "serial"

// Cell is one entry of the result tables: what applied which binlog, how,
// on which replica config.
type Cell struct {
	Workload string
	Config   string
	System   System
	Mode     string
	Threads  int
}

// Label names the cell's column: system and mode.
func (c Cell) Label() string { return c.System.Label() + " " + c.Mode }

func (c Cell) String() string {
	return fmt.Sprintf("%s/%s %s threads=%d", c.Workload, c.Config, c.Label(), c.Threads)
}

// Result is one timed run of a cell.
type Result struct {
	Cell
	Repeat   int     // 1-based
	Seconds  float64 // time to catch up
	Txns     int     // source transactions in the binlog
	Verified bool    // target = source, checksum of every table
	// PreplCPU is the CPU seconds (user + system) of the prepl process;
	// ServerCPU those of the target's mariadbd while it was timed.
	PreplCPU, ServerCPU float64
	// Counters are the target server's status counters over the timed
	// run (differences of SHOW GLOBAL STATUS).
	Counters Counters
	Err      string // why the run failed; empty when it succeeded
}

// OK reports whether the run finished and the target equals the source.
func (r Result) OK() bool { return r.Err == "" && r.Verified }

// TxnPerSec is the run's throughput.
func (r Result) TxnPerSec() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Txns) / r.Seconds
}
