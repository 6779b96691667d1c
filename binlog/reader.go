// Package binlog reads a MySQL/MariaDB row-based binary log, live from a
// source over the replication protocol (StreamReader) or from binlog files
// (FileReader), and decodes it with go-mysql into complete transactions of
// the txn model. Both readers share one assembler, so the same binlog read
// either way gives the same transactions.
package binlog

import (
	"context"

	"github.com/prepl/prepl/txn"
)

// Reader is a source of complete transactions in binlog order.
//
// Next returns io.EOF when there is nothing more to read (the end of the
// files, or the source's end with StopAtEnd), and a *FormatError for a
// binlog that cannot be read further; every transaction before the
// damage has been returned first. A Reader is not safe for concurrent use.
type Reader interface {
	Next(ctx context.Context) (*txn.Txn, error)
	Flavor() txn.Flavor
	Close() error
}

var (
	_ Reader = (*FileReader)(nil)
	_ Reader = (*StreamReader)(nil)
)
