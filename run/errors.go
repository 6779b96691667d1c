package run

import "errors"

// ErrUsage marks a mistake of the user's (flags, config, a file set that is
// not one stream): running again unchanged cannot help. cmd/prepl exits 2
// on it.
var ErrUsage = errors.New("usage")
