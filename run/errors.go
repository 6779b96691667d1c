package run

import (
	"github.com/prepl/prepl/fault"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
)

// ErrUsage marks a mistake of the user's (flags, config, a file set that is
// not one stream): running again unchanged cannot help. cmd/prepl exits 2
// on it.
var ErrUsage = fault.ErrUsage

// Fatal reports whether err, a run's error, is a mistake a restart cannot
// fix (exit code 2) rather than a fault a restart may fix (exit code 1):
// package fault's rule, each package marking its own errors. The
// database drivers' errors carry no mark: a server refusing a row or a
// table because the target diverged from the source is told by its error
// code, by the backend that knows the codes.
func Fatal(err error) bool {
	return fault.IsFatal(err) || mysql.Diverged(err) || postgres.Diverged(err)
}
