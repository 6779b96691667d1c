// Package fault says whether an error is fatal or retryable, for whoever
// runs prepl again: cmd/prepl exits 2 on a fatal error and 1 on a
// retryable one, and a supervisor (docs/prepl.service) restarts it only on
// the second.
//
// The rule: an error is fatal when a restart cannot fix it, because
// someone must act first: wrong usage or configuration, a damaged or
// statement-based binlog, a target that diverged from the source,
// something prepl does not support, a question only the user can answer
// (did an interrupted DDL take effect?). Any other error is retryable: a
// restart may fix it (a source or target unreachable, a connection lost
// past its reconnect timeout, a binlog file still being written). A run
// stores its position either way.
//
// The package that defines an error says which it is, where it defines
// it: a sentinel is made with Fatal, an error type has a Fatal method
// (Marked). An error that says nothing is retryable. Wrapping keeps the
// mark (errors.Is and errors.As see through it), so callers that test a
// sentinel or a type go on doing so.
//
// This is not the apply engine's classification of a failed attempt
// (apply.Class: retry the transaction, reconnect, or stop), which is
// decided per server error inside one run; a run that stops on a
// deadlock past its retries is still retryable here.
package fault

import "errors"

// ErrUsage is a mistake of the user's (flags, configuration, a file set
// that is not one stream): running again unchanged cannot help.
var ErrUsage = Fatal(errors.New("usage"))

// Marked is an error that says itself whether it is fatal.
type Marked interface {
	error
	Fatal() bool
}

// Fatal returns err marked fatal. The mark adds nothing to err's message,
// and errors.Is and errors.As see err through it. Fatal(nil) is nil.
func Fatal(err error) error {
	if err == nil {
		return nil
	}
	return &fatal{err}
}

type fatal struct{ err error }

func (f *fatal) Error() string { return f.err.Error() }
func (f *fatal) Unwrap() error { return f.err }
func (f *fatal) Fatal() bool   { return true }

// IsFatal reports whether err is fatal: the first error of its tree, in
// errors.As's order, that is Marked says so. An outer error thus decides
// for what it wraps (a binlog.FormatError that is fatal unless its cause
// is an incomplete last transaction). An error with no Marked error in its
// tree is retryable.
func IsFatal(err error) bool {
	var m Marked
	return errors.As(err, &m) && m.Fatal()
}
