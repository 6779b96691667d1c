package main

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
)

// Commands declare their flags with the standard flag package, on a
// flag.FlagSet of their own, and parse with parseFlags: it parses GNU-style
// with github.com/spf13/pflag (--flag and -flag, --flag=value and --flag
// value, flags before or after the arguments, -- ends the flags), then
// applies --config. printFlags prints the flags GNU-style for the help.
// The same flag sets feed shell completion and the man page (completion.go),
// which read them through introspection.
//
// A command written with the standard flag package joins in three steps:
//  1. parse with parseFlags(fs, args) (flags and --config) as the first
//     thing its run function does with args, before any side effect: it
//     also answers introspection (or, without --config: check
//     introspecting(fs, args), then parseArgs(fs, args));
//  2. in fs.Usage, print the flags with printFlags(fs), not fs.PrintDefaults();
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
func (v *goValue) Type() string       { return flagType(v.f) }

// flagType names the type of a flag's value, for the help and for config
// errors: string, int, uint, bool, duration, float, list.
func flagType(f *flag.Flag) string {
	if _, ok := f.Value.(*multiFlag); ok {
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

// printFlags writes fs's flags GNU-style (--name TYPE, usage, default).
func printFlags(fs *flag.FlagSet) {
	fmt.Fprint(fs.Output(), gnuFlags(fs).FlagUsagesWrapped(0))
}

// keepFlags defines on fs the flags names of from, sharing their values:
// a command that uses some of a shared set shows and accepts only those.
func keepFlags(fs, from *flag.FlagSet, names ...string) {
	for _, n := range names {
		f := from.Lookup(n)
		if f == nil {
			panic("keepFlags: no flag " + n)
		}
		fs.Var(f.Value, f.Name, f.Usage)
		fs.Lookup(n).DefValue = f.DefValue
	}
}

// Introspection: commandFlags runs a command with one argument, a token
// no user types; the command's parseFlags (or introspected) hands its flag
// set over under that token and the command stops (errIntrospect). Safe
// while other commands run in the same process (the tests run several).
var (
	introspected sync.Map // token -> *flag.FlagSet
	introspectN  atomic.Uint64
)

const introspectPrefix = "\x00prepl-introspect-"

var errIntrospect = errors.New("introspection")

// introspecting reports whether args ask for fs (and hands it over).
func introspecting(fs *flag.FlagSet, args []string) bool {
	if len(args) == 1 && strings.HasPrefix(args[0], introspectPrefix) {
		introspected.Store(args[0], fs)
		return true
	}
	return false
}

// commandFlags returns the flag set of command c without running it.
func commandFlags(c command) *flag.FlagSet {
	token := fmt.Sprintf("%s%d", introspectPrefix, introspectN.Add(1))
	c.run(context.Background(), []string{token}, io.Discard, io.Discard)
	fs, ok := introspected.LoadAndDelete(token)
	if !ok {
		return nil
	}
	return fs.(*flag.FlagSet)
}

// parseArgs parses args GNU-style into fs: flags anywhere, the rest are
// fs.Args(). -h and --help print the command's help.
func parseArgs(fs *flag.FlagSet, args []string) error {
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
		return fmt.Errorf("%w: %v (see prepl %s --help)", errUsage, err, fs.Name())
	}
	// The arguments left become fs.Args(); -- keeps fs from reading flags.
	return fs.Parse(append([]string{"--"}, ps.Args()...))
}
