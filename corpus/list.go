package corpus

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// ExclusionKinds are the reasons a test may be left out of the corpus;
// each says why prepl cannot be judged on the test's binlog alone.
var ExclusionKinds = map[string]string{
	"reference-fails": "mariadb-binlog | mariadb cannot apply the test's binlog",
	"outside-binlog":  "the test copies files or state into the server outside the binlog",
	"server-options":  "the test needs server options the targets cannot share",
	"unreadable":      "a checkpoint's state cannot be read for comparison (a table whose tablespace is discarded, a virtual column of RAND() that reads anew each time)",
	"shared-files":    "the test's DDL names files outside the data directory (DATA/INDEX DIRECTORY) the targets would share",
	"mtr":             "mtr cannot run the test here (its own servers, a debug build, a plugin)",
}

// Exclusion is one line of the exclusions file.
type Exclusion struct {
	Test, Kind, Why string
}

// ReadTests reads a list of tests: one SUITE.TEST a line, blank lines and
// "#" comments ignored.
func ReadTests(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(stripComment(line))
		if line == "" {
			continue
		}
		if strings.ContainsAny(line, " \t") || !strings.Contains(line, ".") {
			return nil, fmt.Errorf("%s:%d: %q: want one SUITE.TEST a line", path, i+1, line)
		}
		if seen[line] {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, i+1, line)
		}
		seen[line] = true
		out = append(out, line)
	}
	return out, nil
}

// ReadExclusions reads the exclusions file: "SUITE.TEST: KIND: why" a
// line, KIND one of ExclusionKinds, the why not empty.
func ReadExclusions(path string) (map[string]Exclusion, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]Exclusion{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]Exclusion{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(stripComment(line))
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || strings.TrimSpace(parts[2]) == "" {
			return nil, fmt.Errorf("%s:%d: %q: want SUITE.TEST: KIND: why", path, i+1, line)
		}
		e := Exclusion{strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1]), strings.TrimSpace(parts[2])}
		if _, ok := ExclusionKinds[e.Kind]; !ok {
			return nil, fmt.Errorf("%s:%d: unknown kind %q: want one of %s", path, i+1, e.Kind, kinds())
		}
		if _, dup := out[e.Test]; dup {
			return nil, fmt.Errorf("%s:%d: %s is excluded twice", path, i+1, e.Test)
		}
		out[e.Test] = e
	}
	return out, nil
}

func kinds() string {
	var ks []string
	for k := range ExclusionKinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// stripComment cuts a "#" comment; test names and reasons hold no "#".
func stripComment(line string) string {
	if i := strings.Index(line, "#"); i >= 0 {
		return line[:i]
	}
	return line
}
