// Package scenario is prepl's differential test suite: each folder of
// testdata/scenarios is a small SQL workload run on a sandbox source, then
// applied from the same binlog by MariaDB's own replica (the reference), by
// `mariadb-binlog | mariadb`, and by prepl in every mode; the targets are
// compared table by table, and routines, triggers, views and events by
// definition. testdata/scenarios/README.md describes a scenario's files.
//
// This file reads scenarios; the harness that runs them is
// harness_test.go, and dump.go captures a server's state for comparison.
package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Outcome is what prepl must do with a scenario.
type Outcome string

const (
	// Equal: every prepl target equals MariaDB's replica.
	Equal Outcome = "equal"
	// EqualReplay: every prepl target equals `mariadb-binlog | mariadb`
	// (for scenarios the replica cannot apply).
	EqualReplay Outcome = "equal-replay"
	// PreplError: prepl exits non-zero with a message matching Expect.Error,
	// having applied nothing of the offending transaction.
	PreplError Outcome = "prepl-error"
)

// OutputRun is the prepl run whose output Expect.Output must match: its
// units are the largest (no workers to wait for).
const OutputRun = "replay/serial/compact"

// Expect is a scenario's expect file.
type Expect struct {
	Outcome Outcome
	Error   *regexp.Regexp // PreplError: prepl's message must match
	// ReferenceFails says why MariaDB's replica stops on this scenario; the
	// harness checks that it does.
	ReferenceFails string
	// ReplayDiffers says why `mariadb-binlog | mariadb` does not equal the
	// replica here; without it the two references must agree.
	ReplayDiffers string
	// NoRows are queries that must return no rows on every prepl target.
	NoRows []string
	// Output must match what prepl prints in its serial, compacted
	// replay (OutputRun): it shows a path the scenario is there to take.
	Output *regexp.Regexp
	// KnownFailure matches the failure prepl shows today; a run failing
	// otherwise fails the test, and a scenario whose runs all pass fails
	// it too ("remove known-failure").
	KnownFailure *regexp.Regexp
	// Crash: also kill prepl replay at random moments and resume it.
	Crash bool
}

// Scenario is one folder of testdata/scenarios.
type Scenario struct {
	Name     string
	Dir      string
	Setup    string   // setup.sql: run on the source (not binlogged) and on every target
	Target   string   // target.sql: run on every target only
	Sessions []string // source.sql split at "-- split" lines, one client session each
	Expect   Expect
}

// Load reads every scenario under dir, sorted by name.
func Load(dir string) ([]Scenario, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Scenario
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		s, err := LoadOne(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// LoadOne reads the scenario in folder dir.
func LoadOne(dir string) (Scenario, error) {
	s := Scenario{Name: filepath.Base(dir), Dir: dir}
	src, err := os.ReadFile(filepath.Join(dir, "source.sql"))
	if err != nil {
		return s, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	s.Sessions = SplitSessions(string(src))
	if s.Setup, err = optional(filepath.Join(dir, "setup.sql")); err != nil {
		return s, err
	}
	if s.Target, err = optional(filepath.Join(dir, "target.sql")); err != nil {
		return s, err
	}
	exp, err := optional(filepath.Join(dir, "expect"))
	if err != nil {
		return s, err
	}
	if s.Expect, err = ParseExpect(exp); err != nil {
		return s, fmt.Errorf("scenario %s: expect: %w", s.Name, err)
	}
	return s, nil
}

func optional(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return string(b), err
}

var splitLine = regexp.MustCompile(`(?m)^[ \t]*-- split[ \t]*$`)

// SplitSessions cuts a source.sql at its "-- split" lines, dropping parts
// with nothing but blanks and comments.
func SplitSessions(sql string) []string {
	var out []string
	for _, p := range splitLine.Split(sql, -1) {
		if hasSQL(p) {
			out = append(out, p)
		}
	}
	return out
}

func hasSQL(p string) bool {
	for _, l := range strings.Split(p, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "--") && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

// ParseExpect reads an expect file: one directive per line, "#" comments;
// empty means "equal".
func ParseExpect(text string) (Expect, error) {
	var e Expect
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, _ := strings.Cut(line, ":")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		bad := func(why string) error { return fmt.Errorf("line %d %q: %s", i+1, line, why) }
		setOutcome := func(o Outcome) error {
			if e.Outcome != "" && e.Outcome != o {
				return bad("a second outcome (already " + string(e.Outcome) + ")")
			}
			e.Outcome = o
			return nil
		}
		var err error
		switch key {
		case "equal":
			switch val {
			case "":
				err = setOutcome(Equal)
			case "replay":
				err = setOutcome(EqualReplay)
			default:
				err = bad(`want "equal" or "equal: replay"`)
			}
		case "prepl-error":
			if err = setOutcome(PreplError); err == nil {
				e.Error, err = compile(val, bad)
			}
		case "known-failure":
			e.KnownFailure, err = compile(val, bad)
		case "reference-fails":
			if val == "" {
				err = bad("say why the replica fails")
			}
			e.ReferenceFails = val
		case "replay-differs":
			if val == "" {
				err = bad("say why the replay differs")
			}
			e.ReplayDiffers = val
		case "no-rows":
			if val == "" {
				err = bad("give a query")
			}
			e.NoRows = append(e.NoRows, val)
		case "output":
			if e.Output, err = regexp.Compile(val); err != nil || val == "" {
				err = bad("give a regular expression")
			}
		case "crash":
			e.Crash = true
		default:
			err = bad("unknown directive")
		}
		if err != nil {
			return e, err
		}
	}
	if e.Outcome == "" {
		e.Outcome = Equal
	}
	if e.ReferenceFails != "" && e.Outcome == Equal {
		return e, errors.New(`reference-fails needs what prepl must do instead: "prepl-error: REGEXP" or "equal: replay"`)
	}
	if e.ReferenceFails == "" && e.Outcome == EqualReplay {
		return e, errors.New(`"equal: replay" is for scenarios the replica cannot apply: add "reference-fails: WHY"`)
	}
	return e, nil
}

func compile(val string, bad func(string) error) (*regexp.Regexp, error) {
	if val == "" {
		return nil, bad("give a regular expression")
	}
	re, err := regexp.Compile(val)
	if err != nil {
		return nil, bad(err.Error())
	}
	return re, nil
}
