package main

import (
	"github.com/prepl/prepl/internal/cli"
)

// The command-line toolkit is package internal/cli: GNU-style flags over
// the standard flag package, --config, introspection for completion and
// the man page. These are its functions under the names the commands use.
var (
	parseFlags     = cli.ParseFlags
	parseFlagsOnly = cli.ParseFlagsOnly
	parseArgs      = cli.ParseArgs
	printFlags     = cli.PrintFlags
	keepFlags      = cli.KeepFlags
	introspecting  = cli.Introspecting
	errIntrospect  = cli.ErrIntrospect
)

// multiFlag is a repeatable flag.
type multiFlag = cli.Multi

// configKeys are a map's keys, sorted.
func configKeys[V any](m map[string]V) []string { return cli.SortedKeys(m) }

type command = cli.Command

// allCommands is the commands table, for functions that the table's
// commands call (set in init: a reference in a variable's initializer
// would be an initialization cycle).
var allCommands func() []command

func init() {
	allCommands = func() []command { return commands }
	cli.Register(allCommands)
}
