package position

import (
	"testing"

	"github.com/prepl/prepl/txn"
)

func TestLess(t *testing.T) {
	cases := []struct {
		fa   string
		pa   uint32
		fb   string
		pb   uint32
		want bool
	}{
		{"binlog.000001", 100, "binlog.000001", 200, true},
		{"binlog.000001", 200, "binlog.000001", 200, false},
		{"binlog.000009", 900, "binlog.000010", 4, true},
		{"binlog.000010", 4, "binlog.000009", 900, false},
		{"binlog.999999", 4, "binlog.1000000", 4, true},
	}
	for _, c := range cases {
		if got := Less(c.fa, c.pa, c.fb, c.pb); got != c.want {
			t.Errorf("Less(%s:%d, %s:%d) = %v, want %v", c.fa, c.pa, c.fb, c.pb, got, c.want)
		}
	}
}

func TestSet(t *testing.T) {
	g, err := ParseSet("0-1-10,2-5-7")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tx   txn.Txn
		want bool
	}{
		{txn.Txn{GTID: "0-1-10", Domain: 0, SeqNo: 10}, true},
		{txn.Txn{GTID: "0-1-11", Domain: 0, SeqNo: 11}, false},
		{txn.Txn{GTID: "2-5-3", Domain: 2, SeqNo: 3}, true},
		{txn.Txn{GTID: "1-1-1", Domain: 1, SeqNo: 1}, false},
	} {
		if got := g.Contains(&c.tx); got != c.want {
			t.Errorf("Contains(%s) = %v, want %v", c.tx.GTID, got, c.want)
		}
	}
	g.Add(&txn.Txn{GTID: "1-1-4", Domain: 1, SeqNo: 4})
	g.Add(&txn.Txn{GTID: "0-2-12", Domain: 0, SeqNo: 12})
	if s := g.String(); s != "0-2-12,1-1-4,2-5-7" {
		t.Errorf("String() = %q", s)
	}
	m, err := ParseSet("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5")
	if err != nil {
		t.Fatal(err)
	}
	m.Add(&txn.Txn{GTID: "3E11FA47-71CA-11E1-9E33-C80AA9429562:6"})
	if !m.Contains(&txn.Txn{GTID: "3e11fa47-71ca-11e1-9e33-c80aa9429562:6"}) {
		t.Errorf("MySQL set %s does not contain :6 after add", m)
	}
	if m.Contains(&txn.Txn{GTID: "3E11FA47-71CA-11E1-9E33-C80AA9429562:8"}) {
		t.Errorf("MySQL set %s contains :8", m)
	}
	if _, err := ParseSet("0-1"); err == nil {
		t.Error("bad GTID accepted")
	}
}

func TestSetMergeCovers(t *testing.T) {
	for _, c := range []struct {
		a, b, merged string
		aCoversB     bool
	}{
		{"0-1-10,1-1-5", "0-2-8,2-1-1", "0-1-10,1-1-5,2-1-1", false},
		{"0-1-10", "0-1-10", "0-1-10", true},
		{"0-1-10,1-1-2", "0-3-9", "0-1-10,1-1-2", true},
		{"", "0-1-1", "0-1-1", false},
		{"0-1-1", "", "0-1-1", true},
		{u1 + ":1-5", u1 + ":3-9", u1 + ":1-9", false},
		{u1 + ":1-9", u1 + ":3-4", u1 + ":1-9", true},
	} {
		a, b := MustParseSet(c.a), MustParseSet(c.b)
		if got := a.Covers(b); got != c.aCoversB {
			t.Errorf("%q covers %q = %v", c.a, c.b, got)
		}
		m := a.Clone()
		if err := m.Merge(c.b); err != nil || m.String() != c.merged {
			t.Errorf("%q merged with %q = %q, %v; want %q", c.a, c.b, m, err, c.merged)
		}
		if a.String() != MustParseSet(c.a).String() {
			t.Errorf("Clone shares state: %q became %q", c.a, a)
		}
	}
}
