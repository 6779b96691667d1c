package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prepl/prepl/apply"
)

// TestSelectionThatSelectsNothing: bounds that select nothing (start not
// before stop) are refused as a usage error, naming both; bounds that
// select something, or positions in two different files, are taken.
func TestSelectionThatSelectsNothing(t *testing.T) {
	one, two := []string{"/b/binlog.000001"}, []string{"/b/binlog.000001", "/b/binlog.000002"}
	for _, c := range []struct {
		name  string
		flags selectFlags
		files []string
		err   string // "" when taken
	}{
		{"datetimes swapped", selectFlags{startDatetime: "2026-11-20 10:00:00", stopDatetime: "2026-11-20 09:00:00", timezone: "UTC"}, one,
			"--start-datetime 2026-11-20 10:00:00 is not before --stop-datetime 2026-11-20 09:00:00"},
		{"datetimes equal", selectFlags{startDatetime: "2026-11-20 10:00:00", stopDatetime: "2026-11-20T10:00:00Z", timezone: "UTC"}, one,
			"is not before --stop-datetime"},
		{"datetimes in order", selectFlags{startDatetime: "2026-11-20 09:00:00", stopDatetime: "2026-11-20 09:00:01", timezone: "UTC"}, one, ""},
		{"positions swapped in one file", selectFlags{startPosition: "4000", stopPosition: "3000"}, one,
			"--start-position 4000 is not before --stop-position 3000 in the one file given"},
		{"positions equal in one file", selectFlags{startPosition: "3000", stopPosition: "3000"}, one, "is not before --stop-position"},
		{"positions in order", selectFlags{startPosition: "3000", stopPosition: "4000"}, one, ""},
		{"positions in two files", selectFlags{startPosition: "4000", stopPosition: "3000"}, two, ""},
	} {
		_, err := c.flags.parse(c.files)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v, want it taken", c.name, err)
		case c.err != "" && (!errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want a usage error saying %q", c.name, err, c.err)
		}
	}
}

// TestUntilFilter: --stop-gtid applies its own transaction and stops
// before any later one of the same stream, so that a stop GTID missing
// from the binlog (never written, or mistyped in its last digits) still
// stops where it would have been: a later sequence number of the domain
// (MariaDB), a later GNO of the same UUID and tag (MySQL).
func TestUntilFilter(t *testing.T) {
	const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	maria := func(d, s uint32, n uint64) *txnT {
		return &txnT{GTID: fmt.Sprintf("%d-%d-%d", d, s, n), Domain: d, ServerID: s, SeqNo: n}
	}
	my := func(id string, n uint64) *txnT { return &txnT{GTID: fmt.Sprintf("%s:%d", id, n), SeqNo: n} }
	for _, c := range []struct {
		stop string
		t    *txnT
		want apply.Action
	}{
		{"0-1-10", maria(0, 1, 9), apply.Apply},
		{"0-1-10", maria(0, 1, 10), apply.Last},
		{"0-1-10", maria(0, 1, 11), apply.Stop},
		{"0-1-10", maria(0, 2, 11), apply.Stop}, // another server of the domain, after a failover
		{"0-1-10", maria(1, 1, 11), apply.Apply},
		{"0-1-10", &txnT{}, apply.Apply},
		{uuid + ":10", my(uuid, 9), apply.Apply},
		{uuid + ":10", my(uuid, 10), apply.Last},
		{uuid + ":10", my(uuid, 11), apply.Stop},
		{strings.ToUpper(uuid) + ":10", my(uuid, 11), apply.Stop},
		{uuid + ":10", my("4e11fa47-71ca-11e1-9e33-c80aa9429562", 11), apply.Apply},
		{uuid + ":tag:10", my(uuid+":tag", 11), apply.Stop},
		{uuid + ":tag:10", my(uuid, 11), apply.Apply},
		{uuid + ":10", maria(0, 1, 11), apply.Apply},
	} {
		if got := untilFilter(c.stop)(c.t); got != c.want {
			t.Errorf("--stop-gtid %s, transaction %q: %v, want %v", c.stop, c.t.GTID, got, c.want)
		}
	}
}

// TestReplicateFilterUnreached: replicate --until-gtid with --stop-at-end
// warns when the stream ended before it: the filter reports it unreached
// only when it was asked about a transaction and until never ended the
// stream. An until GTID that is also skipped still ends the stream.
func TestReplicateFilterUnreached(t *testing.T) {
	txn := func(n uint64) *txnT { return &txnT{GTID: fmt.Sprintf("0-1-%d", n), SeqNo: n} }
	f, unreached := replicateFilter("0-1-5", nil)
	if unreached() {
		t.Error("unreached before anything was asked")
	}
	f(txn(3))
	if !unreached() {
		t.Error("not unreached after 0-1-3 only")
	}
	if a := f(txn(5)); a != apply.Last || unreached() {
		t.Errorf("0-1-5: %v, unreached %v; want Last, reached", a, unreached())
	}
	f, unreached = replicateFilter("0-1-5", nil)
	if a := f(txn(7)); a != apply.Stop || unreached() {
		t.Errorf("0-1-7 past a missing 0-1-5: %v, unreached %v; want Stop, reached", a, unreached())
	}
	f, _ = replicateFilter("0-1-5", []string{"0-1-5", "0-1-4"})
	if a, b := f(txn(4)), f(txn(5)); a != apply.Skip || b != apply.Stop {
		t.Errorf("skipped 0-1-4 and 0-1-5 with --until-gtid 0-1-5: %v, %v; want Skip, Stop", a, b)
	}
	if _, unreached := replicateFilter("", []string{"0-1-5"}); unreached() {
		t.Error("unreached without --until-gtid")
	}
}
