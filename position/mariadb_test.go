package position

import (
	"reflect"
	"testing"

	"github.com/prepl/prepl/txn"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		start, end string
		want       int
		err        bool
	}{
		{"0-1-4", "0-1-304", 300, false},
		{"0-1-4", "0-1-4", 0, false},
		{"", "0-1-10", 10, false},
		{"0-1-10,1-1-5", "0-1-20,1-2-7", 12, false}, // per domain; the server id may change
		{"0-1-10", "0-1-20,1-1-3", 13, false},       // a new domain counts from 0
		{"0-1-10,1-1-5", "0-1-20", 0, true},         // a domain vanished
		{"0-1-10", "0-1-9", 0, true},                // went back
		{"0-1", "0-1-9", 0, true},
		{"0-1-x", "0-1-9", 0, true},
		{"0-1-1,0-1-2", "0-1-9", 0, true},
	} {
		got, err := Distance(c.start, c.end)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("Distance(%q, %q) = %d, %v; want %d, error %v", c.start, c.end, got, err, c.want, c.err)
		}
	}
}

func TestParseMariaDBPos(t *testing.T) {
	g, err := ParseMariaDBPos("0-1-100, 3-2-5")
	if err != nil || !reflect.DeepEqual(g, map[uint32]uint64{0: 100, 3: 5}) {
		t.Fatalf("parse: %v %v", g, err)
	}
	for _, bad := range []string{"0-1", "0-1-2-3", "a-1-2", "0-1-1,0-2-2"} {
		if _, err := ParseMariaDBPos(bad); err == nil {
			t.Errorf("ParseMariaDBPos(%q) accepted", bad)
		}
	}
	for _, c := range []struct {
		want map[uint32]uint64
		ok   bool
	}{{map[uint32]uint64{0: 100}, true}, {map[uint32]uint64{0: 101}, false}, {map[uint32]uint64{1: 1}, false}, {nil, true}} {
		if got := CoversSeqs(g, c.want); got != c.ok {
			t.Errorf("CoversSeqs(%v, %v) = %v", g, c.want, got)
		}
	}
}

func TestCompare(t *testing.T) {
	p := func(f string, o uint32) txn.Position { return txn.Position{File: f, Offset: o} }
	for _, c := range []struct {
		a, b txn.Position
		want int
	}{
		{p("binlog.000001", 5), p("binlog.000001", 5), 0},
		{p("binlog.000001", 500), p("binlog.000002", 4), -1},
		{p("binlog.000010", 4), p("binlog.000009", 900), 1},
		{p("binlog.999999", 4), p("binlog.1000000", 4), -1},
	} {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%v, %v) = %d", c.a, c.b, got)
		}
	}
}
