package analyze

import (
	"time"

	"github.com/prepl/prepl/txn"
)

// totals counts what a stretch of binlog holds.
type totals struct {
	txns, rows, stmts, ddl, xa, nonTrans, bytes, big uint64
	first, last                                      time.Time
	size, rowsPer                                    logHist
}

func (t *totals) add(tx *txn.Txn, bigBytes int) {
	t.txns++
	rows := uint64(tx.Rows())
	t.rows += rows
	t.stmts += uint64(len(tx.Changes)) - rows
	t.bytes += uint64(tx.Size)
	if tx.IsDDL() {
		t.ddl++
	}
	if tx.XA {
		t.xa++
	}
	if tx.NonTransactional {
		t.nonTrans++
	}
	if tx.Size >= bigBytes {
		t.big++
	}
	if !tx.Timestamp.IsZero() {
		if t.first.IsZero() || tx.Timestamp.Before(t.first) {
			t.first = tx.Timestamp
		}
		if tx.Timestamp.After(t.last) {
			t.last = tx.Timestamp
		}
	}
	t.size.add(uint64(max(tx.Size, 0)))
	t.rowsPer.add(rows)
}

// Summary is what a binlog (or one file of it) holds.
type Summary struct {
	Transactions     uint64       `json:"transactions"`
	Rows             uint64       `json:"rows"`
	Bytes            uint64       `json:"bytes"`
	Statements       uint64       `json:"statements"` // SQL statements inside row transactions (not DDL)
	DDL              uint64       `json:"ddl"`
	XA               uint64       `json:"xa"`
	NonTransactional uint64       `json:"non_transactional"`
	Big              uint64       `json:"big"` // transactions of at least the big-transaction size
	First            time.Time    `json:"first,omitzero"`
	Last             time.Time    `json:"last,omitzero"`
	Seconds          float64      `json:"source_seconds"` // source time from the first commit to the last
	SourceRate       float64      `json:"source_txn_per_sec,omitempty"`
	Size             Distribution `json:"size_bytes"`
	RowsPerTxn       Distribution `json:"rows_per_txn"`
	SizeHistogram    []Bucket     `json:"size_histogram"`
}

func (t *totals) summary() Summary {
	s := Summary{Transactions: t.txns, Rows: t.rows, Bytes: t.bytes, Statements: t.stmts, DDL: t.ddl,
		XA: t.xa, NonTransactional: t.nonTrans, Big: t.big, First: t.first, Last: t.last,
		Size: t.size.distribution(), RowsPerTxn: t.rowsPer.distribution(), SizeHistogram: t.size.octaves()}
	if !t.first.IsZero() {
		s.Seconds = t.last.Sub(t.first).Seconds()
		if s.Seconds > 0 {
			s.SourceRate = float64(t.txns) / s.Seconds
		}
	}
	return s
}

// fileAcc is what analyze keeps per binlog file.
type fileAcc struct {
	name     string
	tot      totals
	groups   groupAcc
	source   intervalAcc // MySQL's own intervals
	writeset intervalAcc // intervals from prepl's writeset dependencies
}

// FileSummary is one binlog file's line of the report.
type FileSummary struct {
	File string `json:"file"`
	Summary
	GroupCommits    uint64         `json:"group_commits,omitempty"`
	AvgGroupSize    float64        `json:"avg_group_size,omitempty"`
	SourceIntervals *IntervalStats `json:"source_intervals,omitempty"`
	Writeset        IntervalStats  `json:"writeset_intervals"`
}

func (f *fileAcc) summary() FileSummary {
	fs := FileSummary{File: f.name, Summary: f.tot.summary(), Writeset: f.writeset.stats()}
	fs.SizeHistogram = nil
	if f.groups.tagged > 0 {
		fs.GroupCommits, fs.AvgGroupSize = f.groups.groups, f.groups.avg()
	}
	if f.source.n > 0 {
		st := f.source.stats()
		fs.SourceIntervals = &st
	}
	return fs
}
