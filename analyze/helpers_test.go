package analyze

import (
	"fmt"
	"time"

	"github.com/prepl/prepl/txn"
)

// tables with FULL metadata (names, primary key) or without a key.
var (
	tblT    = &txn.Table{Schema: "d", Name: "t", Types: []byte{txn.TypeLong, txn.TypeVarchar}, Nullable: []bool{false, true}, Names: []string{"id", "v"}, PrimaryKey: []int{0}}
	tblU    = &txn.Table{Schema: "e", Name: "u", Types: []byte{txn.TypeLong}, Nullable: []bool{false}, Names: []string{"id"}, PrimaryKey: []int{0}}
	tblNoPK = &txn.Table{Schema: "d", Name: "nopk", Types: []byte{txn.TypeLong}, Nullable: []bool{true}, Names: []string{"a"}}
	tblMin  = &txn.Table{Schema: "d", Name: "minimal", Types: []byte{txn.TypeLong}, Nullable: []bool{false}} // binlog_row_metadata MINIMAL
)

func upd(t *txn.Table, id int64) txn.Change {
	before := make([]txn.Value, len(t.Types))
	after := make([]txn.Value, len(t.Types))
	before[0], after[0] = id, id
	cols := make([]bool, len(t.Types))
	for i := range cols {
		cols[i] = true
	}
	return txn.Change{Row: &txn.RowChange{Kind: txn.Update, Table: t, Before: before, After: after, BeforeCols: cols, AfterCols: cols}}
}

func ddl(sql string) txn.Change {
	return txn.Change{Stmt: &txn.Statement{SQL: sql, Schema: "d", DDL: true}}
}

// gen numbers transactions and gives them positions and sizes.
type gen struct {
	seq  uint64
	file string
	off  uint32
}

func (g *gen) txn(changes ...txn.Change) *txn.Txn {
	g.seq++
	if g.file == "" {
		g.file = "binlog.000001"
	}
	size := 100 + 50*len(changes)
	t := &txn.Txn{Seq: g.seq, GTID: fmt.Sprintf("0-1-%d", g.seq), SeqNo: g.seq, Changes: changes,
		LastCommitted: -1, SequenceNumber: -1, Size: size, Flags: txn.FlagTransactional | txn.FlagAllowParallel,
		Timestamp: time.Unix(1700000000+int64(g.seq), 0).UTC(),
		Start:     txn.Position{File: g.file, Offset: g.off}, End: txn.Position{File: g.file, Offset: g.off + uint32(size)}}
	g.off += uint32(size)
	return t
}

// fastCommit is a cost model where only rows cost: parallel speedups are
// then the graph's.
var fastCommit = Costs{Row: time.Millisecond, Commit: time.Nanosecond, Stmt: time.Millisecond, PerKiB: time.Nanosecond, DDL: time.Millisecond}

func analyzeAll(opt Options, txs []*txn.Txn) *Report {
	a := New(opt)
	for _, t := range txs {
		a.Add(t)
	}
	return a.Finish()
}
