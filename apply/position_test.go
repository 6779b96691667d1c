package apply

import (
	"testing"

	"github.com/prepl/prepl/txn"
)

func TestPositionLess(t *testing.T) {
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
		if got := PositionLess(c.fa, c.pa, c.fb, c.pb); got != c.want {
			t.Errorf("PositionLess(%s:%d, %s:%d) = %v, want %v", c.fa, c.pa, c.fb, c.pb, got, c.want)
		}
	}
}

func TestGTIDState(t *testing.T) {
	g, err := newGTIDState("0-1-10,2-5-7")
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
	g.add(&txn.Txn{GTID: "1-1-4", Domain: 1, SeqNo: 4})
	g.add(&txn.Txn{GTID: "0-2-12", Domain: 0, SeqNo: 12})
	if s := g.String(); s != "0-2-12,1-1-4,2-5-7" {
		t.Errorf("String() = %q", s)
	}
	m, err := newGTIDState("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5")
	if err != nil {
		t.Fatal(err)
	}
	m.add(&txn.Txn{GTID: "3E11FA47-71CA-11E1-9E33-C80AA9429562:6"})
	if !m.Contains(&txn.Txn{GTID: "3e11fa47-71ca-11e1-9e33-c80aa9429562:6"}) {
		t.Errorf("MySQL set %s does not contain :6 after add", m)
	}
	if m.Contains(&txn.Txn{GTID: "3E11FA47-71CA-11E1-9E33-C80AA9429562:8"}) {
		t.Errorf("MySQL set %s contains :8", m)
	}
	if _, err := newGTIDState("0-1"); err == nil {
		t.Error("bad GTID accepted")
	}
}
