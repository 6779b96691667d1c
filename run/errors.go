package run

import (
	"errors"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
)

// ErrUsage marks a mistake of the user's (flags, config, a file set that is
// not one stream): running again unchanged cannot help. cmd/prepl exits 2
// on it.
var ErrUsage = errors.New("usage")

// Fatal reports whether err, a run's error, is a mistake a restart cannot
// fix (exit code 2): wrong usage or config, a damaged or non-row-based
// binlog (from a file, or met twice at the same place in a live stream), a
// target that diverged from the source, something prepl does not support.
// Any other error is a fault a restart may fix (exit code 1): source or
// target unreachable or gone, a lost connection past its reconnect
// timeout, the last binlog file ending inside a transaction that is still
// being written. The position is stored either way.
func Fatal(err error) bool {
	var fe *binlog.FormatError
	switch {
	case errors.Is(err, ErrUsage):
		return true
	case errors.As(err, &fe):
		if errors.Is(err, binlog.ErrIncomplete) {
			return false
		}
		return true
	case errors.Is(err, mysql.ErrRowCount), errors.Is(err, mysql.ErrUnsupported), mysql.Diverged(err), postgres.Diverged(err):
		return true // the target diverged: someone must repair it, or skip
	case errors.Is(err, postgres.ErrRefusedDDL), errors.Is(err, postgres.ErrNotTranslated), errors.Is(err, postgres.ErrUnsupported),
		errors.Is(err, postgres.ErrNoTable), errors.Is(err, postgres.ErrOptions):
		return true // a PostgreSQL target cannot take it: the user must (--skip-gtid, or a fix of the source)
	case errors.As(err, new(*mysql.PendingDDLError)), errors.As(err, new(*mysql.PendingRowsError)):
		return true // a restart cannot answer the question; the user must
	case errors.Is(err, mysql.ErrTooLarge):
		return true // the target's max_allowed_packet must be raised first
	}
	return false
}
