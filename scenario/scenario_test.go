package scenario

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseExpect(t *testing.T) {
	cases := []struct {
		text    string
		outcome Outcome
		err     string // substring of the error; "" for none
		check   func(Expect) bool
	}{
		{"", Equal, "", nil},
		{"# only a comment\n\nequal\n", Equal, "", nil},
		{"prepl-error: XA .* not supported", PreplError, "", func(e Expect) bool { return e.Error.MatchString("XA foo not supported") }},
		{"prepl-error:", "", "give a regular expression", nil},
		{"prepl-error: (", "", "missing closing", nil},
		{"equal\nprepl-error: x", "", "a second outcome", nil},
		{"reference-fails: dup key\nprepl-error: Duplicate", PreplError, "", func(e Expect) bool { return e.ReferenceFails == "dup key" }},
		{"reference-fails: dup key", "", "needs what prepl must do", nil},
		{"reference-fails: it cannot\nequal: replay", EqualReplay, "", nil},
		{"equal: replay", "", "add \"reference-fails", nil},
		{"equal: source", "", `want "equal"`, nil},
		{"no-rows: SELECT 1\nno-rows: SELECT 2", Equal, "", func(e Expect) bool { return reflect.DeepEqual(e.NoRows, []string{"SELECT 1", "SELECT 2"}) }},
		{"crash\nknown-failure: ^crash/", Equal, "", func(e Expect) bool { return e.Crash && e.KnownFailure.MatchString("crash/writeset: x") }},
		{"replay-differs: events", Equal, "", func(e Expect) bool { return e.ReplayDiffers == "events" }},
		{"replay-differs:", "", "say why", nil},
		{"output: rows events: [1-9]", Equal, "", func(e Expect) bool { return e.Output.MatchString("rows events: 12") }},
		{"output:", "", "give a regular expression", nil},
		{"output: (", "", "give a regular expression", nil},
		{"equals", "", "unknown directive", nil},
	}
	for _, c := range cases {
		e, err := ParseExpect(c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseExpect(%q) error %v, want one containing %q", c.text, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseExpect(%q): %v", c.text, err)
			continue
		}
		if e.Outcome != c.outcome || c.check != nil && !c.check(e) {
			t.Errorf("ParseExpect(%q) = %+v, want outcome %s", c.text, e, c.outcome)
		}
	}
}

func TestSplitSessions(t *testing.T) {
	cases := []struct {
		sql  string
		want []string
	}{
		{"SELECT 1;\n", []string{"SELECT 1;\n"}},
		{"A;\n-- split\nB;\n", []string{"A;\n", "\nB;\n"}},
		{"  -- split  \nA;\n-- split\n-- only a comment\n", []string{"\nA;\n"}},
		{"A; -- split here is not a marker\n", []string{"A; -- split here is not a marker\n"}},
		{"-- splitting\nA;", []string{"-- splitting\nA;"}},
	}
	for _, c := range cases {
		if got := SplitSessions(c.sql); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitSessions(%q) = %q, want %q", c.sql, got, c.want)
		}
	}
}

func TestDiff(t *testing.T) {
	cases := []struct {
		want, got []string
		diff      string
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, ""},
		{[]string{"a", "a", "b"}, []string{"a", "b"}, "- reference: a"},
		{[]string{"a"}, []string{"a", "c"}, "+ target:    c"},
		{nil, nil, ""},
	}
	for _, c := range cases {
		if d := Diff(c.want, c.got); d != c.diff {
			t.Errorf("Diff(%q, %q) = %q, want %q", c.want, c.got, d, c.diff)
		}
	}
}

// TestScenarioFolders checks that every folder of testdata/scenarios loads.
func TestScenarioFolders(t *testing.T) {
	all, err := Load(filepath.Join("..", "testdata", "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no scenarios")
	}
	for _, s := range all {
		if len(s.Sessions) == 0 {
			t.Errorf("scenario %s: source.sql has no statements", s.Name)
		}
	}
}
