package run

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/txn"
)

// TestSelectionThatSelectsNothing: bounds that select nothing (start not
// before stop) are refused as a usage error, naming both; bounds that
// select something, or positions in two different files, are taken.
func TestSelectionThatSelectsNothing(t *testing.T) {
	one, two := []string{"/b/binlog.000001"}, []string{"/b/binlog.000001", "/b/binlog.000002"}
	for _, c := range []struct {
		name  string
		flags SelectSpec
		files []string
		err   string // "" when taken
	}{
		{"datetimes swapped", SelectSpec{StartDatetime: "2026-11-20 10:00:00", StopDatetime: "2026-11-20 09:00:00", Timezone: "UTC"}, one,
			"--start-datetime 2026-11-20 10:00:00 is not before --stop-datetime 2026-11-20 09:00:00"},
		{"datetimes equal", SelectSpec{StartDatetime: "2026-11-20 10:00:00", StopDatetime: "2026-11-20T10:00:00Z", Timezone: "UTC"}, one,
			"is not before --stop-datetime"},
		{"datetimes in order", SelectSpec{StartDatetime: "2026-11-20 09:00:00", StopDatetime: "2026-11-20 09:00:01", Timezone: "UTC"}, one, ""},
		{"positions swapped in one file", SelectSpec{StartPosition: "4000", StopPosition: "3000"}, one,
			"--start-position 4000 is not before --stop-position 3000 in the one file given"},
		{"positions equal in one file", SelectSpec{StartPosition: "3000", StopPosition: "3000"}, one, "is not before --stop-position"},
		{"positions in order", SelectSpec{StartPosition: "3000", StopPosition: "4000"}, one, ""},
		{"positions in two files", SelectSpec{StartPosition: "4000", StopPosition: "3000"}, two, ""},
	} {
		_, err := ParseSelection(c.flags, c.files)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v, want it taken", c.name, err)
		case c.err != "" && (!errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.err)):
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
	maria := func(d, s uint32, n uint64) *txn.Txn {
		return &txn.Txn{GTID: fmt.Sprintf("%d-%d-%d", d, s, n), Domain: d, ServerID: s, SeqNo: n}
	}
	my := func(id string, n uint64) *txn.Txn { return &txn.Txn{GTID: fmt.Sprintf("%s:%d", id, n), SeqNo: n} }
	for _, c := range []struct {
		stop string
		t    *txn.Txn
		want apply.Action
	}{
		{"0-1-10", maria(0, 1, 9), apply.Apply},
		{"0-1-10", maria(0, 1, 10), apply.Last},
		{"0-1-10", maria(0, 1, 11), apply.Stop},
		{"0-1-10", maria(0, 2, 11), apply.Stop}, // another server of the domain, after a failover
		{"0-1-10", maria(1, 1, 11), apply.Apply},
		{"0-1-10", &txn.Txn{}, apply.Apply},
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
	txn := func(n uint64) *txn.Txn { return &txn.Txn{GTID: fmt.Sprintf("0-1-%d", n), SeqNo: n} }
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

// TestSelectionNamesWhatFilesHold: GTIDs and offsets the files do not hold
// are refused, as the continuity scan reports them; anything the files
// hold, or damage that hides the rest of a file, is taken.
func TestSelectionNamesWhatFilesHold(t *testing.T) {
	const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	maria := []string{"0-1-4", "0-1-5", "0-1-6", "1-2-9"}
	mysqlGTIDs := []string{uuid + ":7", uuid + ":pitr:8"}
	sums := []fileset.FileSummary{{Name: "binlog.000001", End: 1500}, {Name: "binlog.000002", End: 900}}
	damaged := []fileset.FileSummary{{Name: "binlog.000001", End: 700, Damaged: errors.New("truncated")}}
	for _, c := range []struct {
		name  string
		flags SelectSpec
		gtids []string
		sums  []fileset.FileSummary
		err   string // "" when taken
	}{
		{"no selection", SelectSpec{}, maria, sums, ""},
		{"skip held", SelectSpec{SkipGTID: []string{"0-1-5"}}, maria, sums, ""},
		{"skip not held", SelectSpec{SkipGTID: []string{"0-1-5", "0-9-5"}}, maria, sums, "--skip-gtid 0-9-5: not in the files given"},
		{"skip not held, damaged file", SelectSpec{SkipGTID: []string{"0-9-5"}}, maria, damaged, ""},
		{"exclude a GTID held", SelectSpec{ExcludeGTIDs: "1-2-9"}, maria, sums, ""},
		{"exclude a range reaching into the files", SelectSpec{ExcludeGTIDs: "0-1-1-4"}, maria, sums, ""},
		{"exclude sets, one held", SelectSpec{ExcludeGTIDs: "0-2-5, 0-1-6"}, maria, sums, ""},
		{"exclude a range beside the files", SelectSpec{ExcludeGTIDs: "0-1-7-99"}, maria, sums,
			"--exclude-gtids 0-1-7-99: none of its GTIDs is in the files given"},
		{"exclude, server id mistyped", SelectSpec{ExcludeGTIDs: "0-2-5"}, maria, sums, "none of its GTIDs"},
		{"include held", SelectSpec{IncludeGTIDs: "0-1-5-5"}, maria, sums, ""},
		{"include not held", SelectSpec{IncludeGTIDs: "2-1-5"}, maria, sums,
			"--include-gtids 2-1-5: none of its GTIDs is in the files given, so nothing would be applied"},
		{"MySQL exclude held, upper case", SelectSpec{ExcludeGTIDs: strings.ToUpper(uuid) + ":1-7"}, mysqlGTIDs, sums, ""},
		{"MySQL exclude of a tag", SelectSpec{ExcludeGTIDs: uuid + ":pitr:8"}, mysqlGTIDs, sums, ""},
		{"MySQL exclude, GNO beside", SelectSpec{ExcludeGTIDs: uuid + ":8"}, mysqlGTIDs, sums, "none of its GTIDs"},
		{"MySQL include, other UUID", SelectSpec{IncludeGTIDs: "4e11fa47-71ca-11e1-9e33-c80aa9429562:7"}, mysqlGTIDs, sums, "none of its GTIDs"},
		{"start at the first file's end", SelectSpec{StartPosition: "1500"}, maria, sums, ""},
		{"start past the first file's end", SelectSpec{StartPosition: "15000"}, maria, sums,
			"--start-position 15000 is past the end of binlog.000001, whose last event ends at 1500"},
	} {
		sel, err := ParseSelection(c.flags, []string{"/b/binlog.000001", "/b/binlog.000002"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		seen, in := sel.scanGTIDs()
		if seen != nil {
			for _, g := range c.gtids {
				seen(g)
			}
		}
		err = sel.checkFiles(c.sums, in)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v, want it taken", c.name, err)
		case c.err != "" && (!errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want a usage error saying %q", c.name, err, c.err)
		}
	}
}
