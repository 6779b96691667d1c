package mysql

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// Hand-built MariaDB events: a format description, table maps of one INT
// column and write rows events, with or without CRC32 checksums.

func event(typ byte, body []byte, checksum bool) []byte {
	n := 19 + len(body)
	if checksum {
		n += 4
	}
	ev := make([]byte, 19, n)
	binary.LittleEndian.PutUint32(ev[0:], 1700000000)
	ev[4] = typ
	binary.LittleEndian.PutUint32(ev[5:], 1)
	binary.LittleEndian.PutUint32(ev[9:], uint32(n))
	binary.LittleEndian.PutUint32(ev[13:], 1000)
	ev = append(ev, body...)
	if checksum {
		ev = binary.LittleEndian.AppendUint32(ev, crc32.ChecksumIEEE(ev))
	}
	return ev
}

func fdeEvent(checksum bool) []byte {
	body := binary.LittleEndian.AppendUint16(nil, 4)
	ver := make([]byte, 50)
	copy(ver, "10.11.19-MariaDB-log")
	body = append(body, ver...)
	body = append(body, 0, 0, 0, 0, 19)
	post := make([]byte, 164)
	post[tableMapEvent-1] = 8
	for _, typ := range []int{23, 24, 25} {
		post[typ-1] = 8
	}
	body = append(body, post...)
	alg := byte(0)
	if checksum {
		alg = 1
	}
	return event(15, append(body, alg), checksum)
}

func tableMapEv(id uint64, schema, table string, checksum bool) []byte {
	b := binary.LittleEndian.AppendUint64(nil, id)[:6]
	b = append(b, 1, 0) // flags
	b = append(append(append(b, byte(len(schema))), schema...), 0)
	b = append(append(append(b, byte(len(table))), table...), 0)
	b = append(b, 1, 3, 0, 1) // 1 column, LONG, no metadata, nullable
	return event(tableMapEvent, b, checksum)
}

func writeRowsEv(id uint64, end bool, checksum bool, vals ...int32) []byte {
	b := binary.LittleEndian.AppendUint64(nil, id)[:6]
	var flags uint16
	if end {
		flags = rowsFlagStmtEnd
	}
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = append(b, 1, 1) // 1 column, present
	for _, v := range vals {
		b = append(b, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return event(23, b, checksum)
}

// testTxn builds a transaction from rows events given as (table, statement,
// statement end, values); drop removes changes by index afterwards.
type rowsSpec struct {
	table string
	stmt  int
	end   bool
	vals  []int32
}

func testTxn(checksum bool, specs []rowsSpec) *txn.Txn {
	tx := &txn.Txn{GTID: "0-1-7", Format: &txn.Format{Event: fdeEvent(checksum), Flavor: txn.MariaDB, Checksum: checksum}}
	ids := map[string]uint64{}
	for _, s := range specs {
		if ids[s.table] == 0 {
			ids[s.table] = uint64(len(ids) + 70)
		}
		id := ids[s.table]
		sch, tb, _ := strings.Cut(s.table, ".")
		re := &txn.RowsEvent{Map: tableMapEv(id, sch, tb, checksum), Event: writeRowsEv(id, s.end, checksum, s.vals...), Statement: s.stmt, Rows: len(s.vals)}
		tbl := &txn.Table{ID: id, Schema: sch, Name: tb}
		for _, v := range s.vals {
			tx.Changes = append(tx.Changes, txn.Change{Row: &txn.RowChange{Kind: txn.Insert, Table: tbl, After: []txn.Value{int64(v)}, Event: re}})
		}
	}
	return tx
}

// decode parses a BINLOG statement's events with go-mysql, checksums
// verified, and describes them: "map s.t", "rows s.t [1 2] end".
func decode(t *testing.T, fde []byte, q string) []string {
	t.Helper()
	if !strings.HasPrefix(q, "BINLOG '") {
		return []string{"sql " + q}
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(strings.TrimPrefix(q, "BINLOG '"), "'"))
	if err != nil {
		t.Fatal(err)
	}
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(true)
	if _, err := p.Parse(fde); err != nil {
		t.Fatal(err)
	}
	var out []string
	for len(raw) > 0 {
		n := binary.LittleEndian.Uint32(raw[9:])
		ev, err := p.Parse(raw[:n])
		if err != nil {
			t.Fatalf("event %d: %v", len(out), err)
		}
		raw = raw[n:]
		switch e := ev.Event.(type) {
		case *replication.TableMapEvent:
			out = append(out, fmt.Sprintf("map %s.%s", e.Schema, e.Table))
		case *replication.RowsEvent:
			s := fmt.Sprintf("rows %s.%s %v", e.Table.Schema, e.Table.Table, e.Rows)
			if e.Flags&rowsFlagStmtEnd != 0 {
				s += " end"
			}
			out = append(out, s)
		default:
			t.Fatalf("unexpected event %T", e)
		}
	}
	return out
}

func TestBinlogStatements(t *testing.T) {
	cases := []struct {
		name    string
		specs   []rowsSpec
		rename  map[string]string // schema rewrite, as package filter does
		drop    []int             // indexes of changes a filter dropped
		savept  int               // a SAVEPOINT statement before this change index (0: none)
		want    [][]string
		wantErr string
	}{
		{name: "one statement", specs: []rowsSpec{{"s.t", 0, true, []int32{1, 2}}},
			want: [][]string{{"map s.t", "rows s.t [[1] [2]] end"}}},
		{name: "trigger rows in the statement", specs: []rowsSpec{{"s.t", 0, false, []int32{1}}, {"s.audit", 0, true, []int32{9}}},
			want: [][]string{{"map s.t", "map s.audit", "rows s.t [[1]]", "rows s.audit [[9]] end"}}},
		{name: "statements share one BINLOG", specs: []rowsSpec{{"s.t", 0, true, []int32{1}}, {"s.t", 1, true, []int32{2}}},
			want: [][]string{{"map s.t", "rows s.t [[1]] end", "map s.t", "rows s.t [[2]] end"}}},
		{name: "rewritten schema", specs: []rowsSpec{{"s.t", 0, false, []int32{1}}, {"s.audit", 0, true, []int32{9}}},
			rename: map[string]string{"s": "longer_name"},
			want:   [][]string{{"map longer_name.t", "map longer_name.audit", "rows longer_name.t [[1]]", "rows longer_name.audit [[9]] end"}}},
		{name: "excluded last event moves the statement end", specs: []rowsSpec{{"s.t", 0, false, []int32{1}}, {"s.audit", 0, true, []int32{9}}},
			drop: []int{1},
			want: [][]string{{"map s.t", "rows s.t [[1]] end"}}},
		{name: "excluded first event", specs: []rowsSpec{{"s.audit", 0, false, []int32{9}}, {"s.t", 0, true, []int32{1}}},
			drop: []int{0},
			want: [][]string{{"map s.t", "rows s.t [[1]] end"}}},
		{name: "savepoint splits", specs: []rowsSpec{{"s.t", 0, true, []int32{1}}, {"s.t", 2, true, []int32{2}}},
			savept: 1,
			want:   [][]string{{"map s.t", "rows s.t [[1]] end"}, {"sql SAVEPOINT a"}, {"map s.t", "rows s.t [[2]] end"}}},
		{name: "partly filtered event", specs: []rowsSpec{{"s.t", 0, true, []int32{1, 2}}},
			drop: []int{1}, wantErr: "only partly applied"},
	}
	for _, checksum := range []bool{true, false} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/checksum=%v", c.name, checksum), func(t *testing.T) {
				tx := testTxn(checksum, c.specs)
				var kept []txn.Change
				for i, ch := range tx.Changes {
					if c.savept > 0 && i == c.savept {
						kept = append(kept, txn.Change{Stmt: &txn.Statement{SQL: "SAVEPOINT a"}})
					}
					dropped := false
					for _, d := range c.drop {
						dropped = dropped || d == i
					}
					if dropped {
						continue
					}
					if dst, ok := c.rename[ch.Row.Table.Schema]; ok {
						cp := *ch.Row.Table
						cp.Schema = dst
						ch.Row.Table = &cp
					}
					kept = append(kept, ch)
				}
				tx.Changes = kept
				stmts, err := BinlogStatements(tx)
				if c.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), c.wantErr) {
						t.Fatalf("got %v, want an error with %q", err, c.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var got [][]string
				for _, q := range stmts {
					got = append(got, decode(t, tx.Format.Event, q))
				}
				if fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Fatalf("got  %q\nwant %q", got, c.want)
				}
			})
		}
	}
}

// TestBinlogStatementUnchangedEvents: events needing no change go as the
// binlog carried them, byte for byte.
func TestBinlogStatementUnchangedEvents(t *testing.T) {
	tx := testTxn(true, []rowsSpec{{"s.t", 0, false, []int32{1}}, {"s.audit", 0, true, []int32{9}}})
	stmts, err := BinlogStatements(tx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := tx.Changes[0].Row.Event, tx.Changes[1].Row.Event
	want := "BINLOG '" + base64.StdEncoding.EncodeToString(append(append(append(append([]byte(nil), a.Map...), b.Map...), a.Event...), b.Event...)) + "'"
	if len(stmts) != 1 || stmts[0] != want {
		t.Fatalf("got %q\nwant %q", stmts, want)
	}
}

// TestCanBinlogFlavors: which binlog's events a BINLOG statement can
// carry to which target. MariaDB reads MySQL's rows events of versions 1
// (types 23-25) and 2 (30-32), not MySQL 8's partial JSON update (39).
func TestCanBinlogFlavors(t *testing.T) {
	rows := func(types ...byte) []txn.Change {
		var out []txn.Change
		for _, typ := range types {
			ev := make([]byte, eventHeaderLen+10)
			ev[4] = typ
			tb := &txn.Table{Schema: "s", Name: "t", Types: []byte{txn.TypeLong, txn.TypeVarchar}}
			out = append(out, txn.Change{Row: &txn.RowChange{Table: tb, Event: &txn.RowsEvent{Event: ev}}})
		}
		return out
	}
	jsonRows := rows(30)
	jsonRows[0].Row.Table.Types = []byte{txn.TypeLong, txn.TypeJSON}
	for _, c := range []struct {
		format    *txn.Format
		changes   []txn.Change
		mariaDB   bool
		wantError string
	}{
		{&txn.Format{Flavor: txn.MariaDB}, rows(23, 30), true, ""},
		{&txn.Format{Flavor: txn.MySQL}, rows(39), false, ""},
		{&txn.Format{Flavor: txn.MySQL}, rows(23, 24, 25), true, ""},
		{&txn.Format{Flavor: txn.MySQL}, rows(30, 31, 32), true, ""},
		{&txn.Format{Flavor: txn.MySQL}, rows(30, 39), true, "binlog_row_value_options"},
		{&txn.Format{Flavor: txn.MySQL}, rows(166), true, "MySQL event type 166"},
		{&txn.Format{Flavor: txn.MySQL}, jsonRows, true, "column 2 of s.t is MySQL's JSON"},
		{&txn.Format{Flavor: txn.MariaDB}, rows(23), false, "MariaDB binlog"},
		{nil, rows(23), true, "kept no raw events"},
	} {
		tgt := &Target{IsMariaDB: c.mariaDB}
		err := tgt.canBinlog(&txn.Txn{GTID: "0-1-5", Format: c.format, Changes: c.changes}, "s.t has triggers on the target")
		switch {
		case c.wantError == "" && err != nil:
			t.Errorf("%+v into MariaDB=%v: %v", c.format, c.mariaDB, err)
		case c.wantError != "" && (err == nil || !strings.Contains(err.Error(), c.wantError) || !strings.Contains(err.Error(), "s.t has triggers")):
			t.Errorf("%+v into MariaDB=%v: got %v, want an error with %q naming the table", c.format, c.mariaDB, err, c.wantError)
		}
	}
}
