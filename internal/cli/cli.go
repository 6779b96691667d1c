// Package cli is prepl's command-line toolkit: the commands table, GNU-style
// flag parsing over the standard flag package, the TOML config file
// (--config), and shell completion and the man page made from the
// commands' own flag sets and help. It knows no command: cmd/prepl
// registers them (Register).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/prepl/prepl/fault"
)

// Commands declare their flags with the standard flag package, on a
// flag.FlagSet of their own, and parse with ParseFlags: it parses GNU-style
// with github.com/spf13/pflag (--flag and -flag, --flag=value and --flag
// value, flags before or after the arguments, -- ends the flags), then
// applies --config. PrintFlags prints the flags GNU-style for the help.
// The same flag sets feed shell completion and the man page (completion.go),
// which read them through introspection.
//
// A command written with the standard flag package joins in three steps:
//  1. parse with ParseFlags(fs, args) (flags and --config) as the first
//     thing its run function does with args, before any side effect: it
//     also answers introspection (or, without --config: check
//     Introspecting(fs, args), then ParseArgs(fs, args));
//  2. in fs.Usage, print the flags with PrintFlags(fs), not fs.PrintDefaults();
//  3. add it to the commands table (main.go).
// Flags are declared as before (fs.StringVar, fs.Var...); fs.Args,
// fs.Visit and fs.Lookup work as before.

// gnuFlags mirrors fs in a pflag set. Each value sets through fs.Set, so
// fs knows which flags the command line gave (fs.Visit).
func gnuFlags(fs *flag.FlagSet) *pflag.FlagSet {
	ps := pflag.NewFlagSet(fs.Name(), pflag.ContinueOnError)
	ps.SetOutput(io.Discard)
	ps.Usage = func() {}
	ps.SortFlags = true
	fs.VisitAll(func(g *flag.Flag) {
		pf := ps.VarPF(&goValue{fs: fs, f: g}, g.Name, "", g.Usage)
		pf.DefValue = g.DefValue
		if pf.DefValue == "0s" {
			pf.DefValue = "0" // shown as no default, as 0 of other numbers
		}
		if b, ok := g.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			pf.NoOptDefVal = "true"
		}
	})
	return ps
}

// goValue is a standard flag seen by pflag.
type goValue struct {
	fs *flag.FlagSet
	f  *flag.Flag
}

func (v *goValue) String() string     { return v.f.Value.String() }
func (v *goValue) Set(s string) error { return v.fs.Set(v.f.Name, s) }
func (v *goValue) Type() string       { return FlagType(v.f) }

// FlagType names the type of a flag's value, for the help and for config
// errors: string, int, uint, bool, duration, float, list.
func FlagType(f *flag.Flag) string {
	if _, ok := f.Value.(*Multi); ok {
		return "list"
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "string"
	}
	switch g.Get().(type) {
	case bool:
		return "bool"
	case time.Duration:
		return "duration"
	case int, int64:
		return "int"
	case uint, uint64:
		return "uint"
	case float64:
		return "float"
	case string:
		return "string"
	}
	return strings.ToLower(reflect.TypeOf(g.Get()).Name())
}

// PrintFlags writes fs's flags GNU-style (--name TYPE, usage, default).
func PrintFlags(fs *flag.FlagSet) {
	fmt.Fprint(fs.Output(), gnuFlags(fs).FlagUsagesWrapped(0))
}

// KeepFlags defines on fs the flags names of from, sharing their values:
// a command that uses some of a shared set shows and accepts only those.
func KeepFlags(fs, from *flag.FlagSet, names ...string) {
	for _, n := range names {
		f := from.Lookup(n)
		if f == nil {
			panic("KeepFlags: no flag " + n)
		}
		fs.Var(f.Value, f.Name, f.Usage)
		fs.Lookup(n).DefValue = f.DefValue
	}
}

// Introspection: CommandFlags runs a command with one argument, a token
// no user types; the command's ParseFlags (or introspected) hands its flag
// set over under that token and the command stops (ErrIntrospect). Safe
// while other commands run in the same process (the tests run several).
var (
	introspected sync.Map // token -> *flag.FlagSet
	introspectN  atomic.Uint64
)

const introspectPrefix = "\x00prepl-introspect-"

var ErrIntrospect = errors.New("introspection")

// Introspecting reports whether args ask for fs (and hands it over).
func Introspecting(fs *flag.FlagSet, args []string) bool {
	if len(args) == 1 && strings.HasPrefix(args[0], introspectPrefix) {
		introspected.Store(args[0], fs)
		return true
	}
	return false
}

// CommandFlags returns the flag set of command c without running it.
func CommandFlags(c Command) *flag.FlagSet {
	token := fmt.Sprintf("%s%d", introspectPrefix, introspectN.Add(1))
	c.Run(context.Background(), []string{token}, io.Discard, io.Discard)
	fs, ok := introspected.LoadAndDelete(token)
	if !ok {
		return nil
	}
	return fs.(*flag.FlagSet)
}

// ParseArgs parses args GNU-style into fs: flags anywhere, the rest are
// fs.Args(). -h and --help print the command's help.
func ParseArgs(fs *flag.FlagSet, args []string) error {
	ps := gnuFlags(fs)
	// The single-dash long form of the standard flag package (-target URL)
	// still works: scripts written for it keep running.
	args = append([]string(nil), args...)
	for i, a := range args {
		if a == "--" {
			break
		}
		if name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "="); len(a) > 2 && a[0] == '-' && a[1] != '-' &&
			len(name) > 1 && fs.Lookup(name) != nil {
			args[i] = "-" + a
		}
	}
	if err := ps.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			if fs.Usage != nil {
				fs.Usage()
			}
			return flag.ErrHelp
		}
		return fmt.Errorf("%w: %v (see prepl %s --help)", ErrUsage, err, fs.Name())
	}
	// The arguments left become fs.Args(); -- keeps fs from reading flags.
	return fs.Parse(append([]string{"--"}, ps.Args()...))
}

// Multi is a repeatable flag's values, in the order given.
type Multi []string

func (m *Multi) String() string     { return strings.Join(*m, ",") }
func (m *Multi) Set(v string) error { *m = append(*m, v); return nil }

// ErrUsage marks a command-line mistake (fault.ErrUsage, run.ErrUsage):
// exit code 2.
var ErrUsage = fault.ErrUsage

// Command is one of prepl's commands: run gets the arguments after its name.
type Command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the commands table (Register).
var commands func() []Command

// Register gives the package the commands table, for the config file's
// [COMMAND] tables, its top-level keys, completion and the man page. A
// function, as the table refers to functions that read config files.
func Register(table func() []Command) { commands = table }
