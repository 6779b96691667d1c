package apply

import (
	"fmt"
	"testing"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

func gtx(domain uint32, seq uint64, schema string, end uint32) *txn.Txn {
	t := &txn.Txn{GTID: "", Domain: domain, SeqNo: seq, End: txn.Position{File: "binlog.000001", Offset: end}}
	if seq > 0 {
		t.GTID = gtidString(domain, seq)
	}
	if schema != "" {
		t.Changes = []txn.Change{{Row: &txn.RowChange{Kind: txn.Insert, Table: &txn.Table{Schema: schema, Name: "t"}}}}
	}
	return t
}

func gtidString(domain uint32, seq uint64) string { return fmt.Sprintf("%d-1-%d", domain, seq) }

func TestResumeAlready(t *testing.T) {
	cases := []struct {
		name  string
		rows  map[string]position.Checkpoint
		tx    *txn.Txn
		want  bool
		floor string
	}{
		{name: "nothing stored", rows: nil, tx: gtx(0, 1, "a", 100), want: false},
		{name: "in-order: at or before main",
			rows: map[string]position.Checkpoint{"main": {GTIDPos: "0-1-10", Floor: position.Floor{GTIDPos: "0-1-10"}}},
			tx:   gtx(0, 10, "a", 100), want: true, floor: "0-1-10"},
		{name: "in-order: after main",
			rows: map[string]position.Checkpoint{"main": {GTIDPos: "0-1-10", Floor: position.Floor{GTIDPos: "0-1-10"}}},
			tx:   gtx(0, 11, "a", 100), want: false},
		{name: "a row from before floors is its own floor",
			rows: map[string]position.Checkpoint{"main": {GTIDPos: "0-1-10"}},
			tx:   gtx(0, 9, "a", 100), want: true, floor: "0-1-10"},
		{name: "domain: the other domain's progress does not cover this one",
			rows: map[string]position.Checkpoint{
				"domain:1": {GTIDPos: "1-1-50", Floor: position.Floor{GTIDPos: "0-1-5,1-1-20"}},
				"domain:0": {GTIDPos: "0-1-8", Floor: position.Floor{GTIDPos: "0-1-5,1-1-40"}}},
			tx: gtx(0, 9, "", 0), want: false, floor: "0-1-5,1-1-40"},
		{name: "domain: its own slot covers it above the floor",
			rows: map[string]position.Checkpoint{
				"domain:1": {GTIDPos: "1-1-50", Floor: position.Floor{GTIDPos: "0-1-5,1-1-20"}},
				"domain:0": {GTIDPos: "0-1-8", Floor: position.Floor{GTIDPos: "0-1-5,1-1-40"}}},
			tx: gtx(1, 45, "", 0), want: true},
		{name: "schema: another schema's slot does not cover it",
			rows: map[string]position.Checkpoint{
				"schema:a": {GTIDPos: "0-1-30", Floor: position.Floor{GTIDPos: "0-1-20"}},
				"schema:b": {GTIDPos: "0-1-25", Floor: position.Floor{GTIDPos: "0-1-20"}}},
			tx: gtx(0, 28, "b", 0), want: false},
		{name: "schema: its own slot covers it",
			rows: map[string]position.Checkpoint{
				"schema:a": {GTIDPos: "0-1-30", Floor: position.Floor{GTIDPos: "0-1-20"}},
				"schema:b": {GTIDPos: "0-1-25", Floor: position.Floor{GTIDPos: "0-1-20"}}},
			tx: gtx(0, 28, "a", 0), want: true},
		{name: "files: the highest floor",
			rows: map[string]position.Checkpoint{
				"main":     {File: "binlog.000001", Pos: 500, Floor: position.Floor{File: "binlog.000001", Pos: 500}},
				"schema:a": {File: "binlog.000001", Pos: 900, Floor: position.Floor{File: "binlog.000001", Pos: 700}}},
			tx: gtx(0, 0, "b", 650), want: true},
		{name: "files: above the floor, another slot",
			rows: map[string]position.Checkpoint{
				"schema:a": {File: "binlog.000001", Pos: 900, Floor: position.Floor{File: "binlog.000001", Pos: 700}}},
			tx: gtx(0, 0, "b", 800), want: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := newResume(c.rows)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.init(); err != nil {
				t.Fatal(err)
			}
			if got := r.Already(c.tx); got != c.want {
				t.Fatalf("Already(%s at %d) = %v, want %v", c.tx.GTID, c.tx.End.Offset, got, c.want)
			}
			if c.floor != "" && r.Position.GTIDPos != c.floor {
				t.Fatalf("floor %q, want %q", r.Position.GTIDPos, c.floor)
			}
		})
	}
}
