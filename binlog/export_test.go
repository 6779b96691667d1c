package binlog

import "github.com/prepl/prepl/txn"

// For the external tests (package binlog_test), which read with
// binlog/fileset.

// PartialFile is partialFile's binlog and the offset of its transaction
// that cannot be applied.
func PartialFile() ([]byte, uint32) {
	f, bad := partialFile()
	return f.b, bad
}

// RowsOf is rowsOf.
func RowsOf(tx *txn.Txn) []*txn.RowChange { return rowsOf(tx) }
