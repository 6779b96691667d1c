package bench

import (
	"slices"
	"testing"
)

func TestPlan(t *testing.T) {
	a, _ := ParseConfig("A")
	c, _ := ParseConfig("C")
	cfg := Config{Workloads: Workloads[:2], Configs: []ReplicaConfig{a, c}, Threads: []int{0, 4, 16},
		Systems: []System{MariaDB, PreplReplicate}, MariaDBModes: []string{"conservative", "optimistic"},
		PreplModes: []string{"writeset"}, Repeats: 3, LimitArgs: DefaultLimitArgs}
	cells := cfg.cells(Workloads[0], a)
	// MariaDB: serial + 2 modes × 2 thread counts; prepl: serial + 1 × 2.
	if len(cells) != 5+3 {
		t.Fatalf("%d cells, want 8: %v", len(cells), cells)
	}
	if cells[0] != (Cell{"oltp", "A", MariaDB, SerialMode, 0}) || cells[5] != (Cell{"oltp", "A", PreplReplicate, SerialMode, 0}) {
		t.Errorf("cells out of column order: %v", cells)
	}
	plan := cfg.plan()
	if len(plan) != 2 {
		t.Fatalf("plan has %d workloads, want 2", len(plan))
	}
	runs := plan[0]
	if len(runs) != 2*8*3+3 {
		t.Fatalf("%d runs for oltp, want %d", len(runs), 2*8*3+3)
	}
	// Repeats are outermost within a config: every cell once, then again.
	if runs[0].Repeat != 1 || runs[7].Repeat != 1 || runs[8].Repeat != 2 || runs[8].Cell != runs[0].Cell {
		t.Errorf("repeats not interleaved: %v %v %v", runs[0], runs[7], runs[8])
	}
	last := runs[len(runs)-1]
	if last.System != Limit || last.Config != "C" || last.Repeat != 3 {
		t.Errorf("last run = %+v, want the physical limit on C, repeat 3", last)
	}

	cfg.LimitArgs = nil
	cfg.Threads = []int{4}
	if n := len(cfg.plan()[1]); n != 2*(2+1)*3 {
		t.Errorf("without threads 0 and the limit: %d runs, want %d", n, 2*3*3)
	}
}

func TestParse(t *testing.T) {
	if _, err := ParseWorkload("oltp"); err != nil {
		t.Error(err)
	}
	if w, err := ParseWorkload("tpcc"); err != nil || len(w.Lua) == 0 || w.DB != "tpcc" {
		t.Errorf("tpcc = %+v, %v: want the embedded script", w.Name, err)
	}
	if _, err := ParseWorkload("tpce"); err == nil {
		t.Error("tpce accepted")
	}
	if c, err := ParseConfig("b"); err != nil || c.Name != "B" || !c.Durable() {
		t.Errorf("config b = %+v, %v", c, err)
	}
	if c, _ := ParseConfig("C"); c.Durable() || c.TargetRatio != 1 {
		t.Errorf("config C = %+v", c)
	}
	if c, err := ParseConfig("d"); err != nil || !c.IOBound || !c.Durable() || c.PoolBytes() != 32<<20 {
		t.Errorf("config d = %+v, %v", c, err)
	}
	if _, err := ParseConfig("E"); err == nil {
		t.Error("config E accepted")
	}
	if _, err := ParseSystem("limit"); err == nil {
		t.Error("the physical limit is not a system one asks for")
	}
}

func TestReplicaOptions(t *testing.T) {
	a, _ := ParseConfig("A")
	o := a.options("/snap")
	if !o.Binlog || !o.LogSlaveUpdates || o.SyncBinlog != 1 || o.FlushLogAtTrxCommit != 1 || o.ServerID == 1 || o.FromDataDir != "/snap" {
		t.Errorf("config A options = %+v", o)
	}
	c, _ := ParseConfig("C")
	if o := c.options("/snap"); o.Binlog || o.FlushLogAtTrxCommit != 2 || len(o.Flags) != 0 {
		t.Errorf("config C options = %+v", o)
	}
	d, _ := ParseConfig("D")
	want := []string{"--innodb-buffer-pool-size=32M", "--innodb-flush-method=O_DIRECT", "--innodb-buffer-pool-load-at-startup=OFF"}
	if o := d.options("/snap"); !o.Binlog || o.SyncBinlog != 1 || o.FlushLogAtTrxCommit != 1 || !slices.Equal(o.Flags, want) {
		t.Errorf("config D options = %+v", o)
	}
}

func TestPreplArgs(t *testing.T) {
	files := []string{"/b/binlog.000002", "/b/binlog.000003"}
	extra := []string{"--commit-unit", "1"}
	for _, c := range []struct {
		cell Cell
		want []string
	}{
		{Cell{System: PreplReplicate, Mode: "writeset", Threads: 8}, []string{"replicate", "--source", "S", "--stop-at-end",
			"--target", "T", "--start-gtid", "0-1-4", "--progress", "0", "--workers", "8", "--mode", "writeset", "--commit-unit", "1"}},
		{Cell{System: PreplReplay, Mode: SerialMode, Threads: 0}, []string{"replay", "--target", "T", "--start-gtid", "0-1-4",
			"--progress", "0", "--workers", "0", "--mode", "serial", "--commit-unit", "1", "/b/binlog.000002", "/b/binlog.000003"}},
		{Cell{System: PreplKeepGTID, Mode: "writeset", Threads: 4}, []string{"replicate", "--source", "S", "--stop-at-end", "--keep-gtid",
			"--target", "T", "--start-gtid", "0-1-4", "--progress", "0", "--workers", "4", "--mode", "writeset", "--commit-unit", "1"}},
		{Cell{System: Limit, Mode: "one stream"}, []string{"replay", "--target", "T", "--start-gtid", "0-1-4",
			"--progress", "0", "--commit-unit", "1", "/b/binlog.000002", "/b/binlog.000003"}},
	} {
		if got := preplArgs(c.cell, "S", "T", "0-1-4", files, extra); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.cell, got, c.want)
		}
	}
}
