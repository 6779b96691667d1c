package binlog

import (
	"errors"
	"fmt"
)

// ErrIncomplete is wrapped by the *FormatError returned when the last file
// ends inside a transaction: the source may still be writing it, so a caller
// may choose to wait and read again from the last complete transaction.
var ErrIncomplete = errors.New("incomplete transaction: no commit before the end of the binlog")

// ErrNotRowBased is wrapped by the *FormatError returned when a transaction
// carries DML as SQL text (binlog_format=STATEMENT or MIXED): such a binlog
// cannot be applied row by row.
var ErrNotRowBased = errors.New("binlog is not row-based: DML logged as a statement; set binlog_format=ROW on the source (SET GLOBAL binlog_format=ROW and binlog_format=ROW in my.cnf)")

// FormatError reports a binlog that cannot be read past a point: a
// truncated or corrupted event, a file that is not a binlog, an incomplete
// transaction, or statement-based DML. Every transaction that ended before
// Offset has been returned before the error.
type FormatError struct {
	File   string // base name of the binlog file
	Offset uint32 // where the damage (or the unusable transaction) starts
	GTID   string // of the transaction the damage is in, when known
	Err    error
}

func (e *FormatError) Error() string {
	if e.GTID != "" {
		return fmt.Sprintf("%s at offset %d (in transaction %s): %v", e.File, e.Offset, e.GTID, e.Err)
	}
	return fmt.Sprintf("%s at offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }
