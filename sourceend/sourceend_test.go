package sourceend

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/position"
)

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for name, size := range map[string]int{"bin.000001": 100, "bin.000002": 40} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if filepath.Base(paths[0]) != "bin.000001" {
		paths[0], paths[1] = paths[1], paths[0]
	}
	f := NewFiles(paths)
	if e, ok := f.End(); !ok || e.File != "bin.000002" || e.Pos != 40 {
		t.Errorf("End() = %+v, %v; want bin.000002:40", e, ok)
	}
	for _, c := range []struct {
		file string
		pos  uint32
		want int64
		ok   bool
	}{{"bin.000001", 4, 4, true}, {"bin.000002", 4, 104, true}, {"bin.000003", 4, 0, false}} {
		if got, ok := f.Offset(c.file, c.pos); got != c.want || ok != c.ok {
			t.Errorf("Offset(%s, %d) = %d, %v; want %d, %v", c.file, c.pos, got, ok, c.want, c.ok)
		}
	}
	if _, ok := NewFiles(nil).End(); ok {
		t.Error("no files: an end is known")
	}
}

func TestGTIDCovers(t *testing.T) {
	for _, c := range []struct {
		have, want string
		covers     bool
	}{
		{"0-1-10", "0-1-10", true},
		{"0-1-10", "0-1-11", false},
		{"0-1-10,1-1-5", "0-1-9", true},
		{"0-1-10", "0-1-9,1-1-1", false},
		{"0-1-10", "", false}, // no GTIDs: decided by position
		{"3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5", "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-3", true},
		{"3E11FA47-71CA-11E1-9E33-C80AA9429562:1-2", "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-3", false},
	} {
		if got := GTIDCovers(c.have, c.want); got != c.covers {
			t.Errorf("GTIDCovers(%q, %q) = %v, want %v", c.have, c.want, got, c.covers)
		}
	}
}

func TestReadPosition(t *testing.T) {
	last := position.Checkpoint{File: "bin.000001", Pos: 10}
	if got := ReadPosition(apply.Stats{Last: last}); got != last {
		t.Errorf("nothing read: %+v, want the resumed position", got)
	}
	read := position.Checkpoint{File: "bin.000002", Pos: 4}
	if got := ReadPosition(apply.Stats{Last: last, ReadPos: read}); got != read {
		t.Errorf("read: %+v, want %+v", got, read)
	}
}
