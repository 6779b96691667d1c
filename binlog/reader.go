package binlog

import (
	"context"
	"errors"

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

// ErrClosed is returned by a Reader's Next once it is closed.
var ErrClosed = errors.New("binlog reader closed")
