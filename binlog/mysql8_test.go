package binlog

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// Event bytes of a MySQL 8.4 binlog, built from the documented formats
// (libbinlogevents: binlog_event.h, control_events.h, rows_event.h;
// libs/mysql/serialization for the tagged GTID event; json_binary.h and
// sql/json_diff.cc for binary JSON and partial JSON diffs), for what no
// MySQL server here can write: tagged GTIDs, full row metadata and
// partial JSON updates. Next to them, the real MySQL binlogs in
// /work/shared/fixtures/mysql are read by cmd/prepl's tests.

type mysql84File struct{ b []byte }

func newMySQL84File() *mysql84File {
	f := &mysql84File{b: []byte{0xfe, 'b', 'i', 'n'}}
	fde := append([]byte{4, 0}, make([]byte, 54)...)
	copy(fde[2:], "8.4.0")
	fde = append(append(fde, 19), mysql80PostHeader...)
	f.event(15, append(fde, 1))  // checksum CRC32
	f.event(35, make([]byte, 8)) // Previous_gtids: no GTID before
	return f
}

// event appends one event with its header, position and CRC32.
func (f *mysql84File) event(typ byte, body []byte) uint32 {
	start := uint32(len(f.b))
	size := uint32(19 + len(body) + 4)
	h := make([]byte, 19)
	binary.LittleEndian.PutUint32(h, 1790000000)
	h[4] = typ
	binary.LittleEndian.PutUint32(h[5:], 1)
	binary.LittleEndian.PutUint32(h[9:], size)
	binary.LittleEndian.PutUint32(h[13:], start+size)
	ev := append(h, body...)
	f.b = binary.LittleEndian.AppendUint32(append(f.b, ev...), crc32.ChecksumIEEE(ev))
	return start
}

// serialization (libs/mysql/serialization): unsigned varlen integers end
// their first byte's low bits with as many ones as extra bytes follow.
func varUint(v uint64) []byte {
	n := 1
	for n < 9 && v >= 1<<(7*n) {
		n++
	}
	t := v<<n | (1<<(n-1) - 1)
	out := binary.LittleEndian.AppendUint64(nil, t)
	if n > 8 {
		return append([]byte{0xff}, binary.LittleEndian.AppendUint64(nil, v)...)
	}
	return out[:n]
}

func varInt(v int64) []byte {
	if v >= 0 {
		return varUint(uint64(v) << 1)
	}
	return varUint(uint64(-v-1)<<1 | 1)
}

func fixedBytes(b []byte) []byte {
	var out []byte
	for _, c := range b {
		switch {
		case c < 0x80:
			out = append(out, c<<1)
		case c < 0xc0:
			out = append(out, (c-0x80)<<2|1, 2)
		default:
			out = append(out, (c-0xc0)<<2|1, 3)
		}
	}
	return out
}

// taggedGTID is a Gtid_tagged_log_event body (MySQL 8.3+).
func taggedGTID(uuid []byte, tag string, gno int64, lastCommitted, seq int64) []byte {
	var fields []byte
	field := func(id byte, v []byte) { fields = append(append(fields, id<<1), v...) }
	field(0, fixedBytes([]byte{1}))
	field(1, fixedBytes(uuid))
	field(2, varInt(gno))
	field(3, append([]byte{byte(len(tag)) << 1}, tag...))
	field(4, varInt(lastCommitted))
	field(5, varInt(seq))
	field(6, varUint(1790000000000000))
	field(8, varUint(400))
	field(9, varUint(80400))
	// version 1, the message's size, the last non-ignorable field (9)
	return append([]byte{1 << 1, byte(3+len(fields)) << 1, 9 << 1}, fields...)
}

func queryEventBody(db, sql string) []byte {
	b := make([]byte, 13)
	b[8] = byte(len(db))
	b = append(append(append(b, db...), 0), sql...)
	return b
}

func lenencInt(n int) []byte {
	if n < 251 {
		return []byte{byte(n)}
	}
	return append([]byte{0xfc}, byte(n), byte(n>>8))
}

// tableMapFull is doc(id INT UNSIGNED PRIMARY KEY, j JSON, name
// VARCHAR(40) utf8mb4_0900_ai_ci) in shop, with binlog_row_metadata=FULL.
func tableMapFull() []byte {
	b := []byte{100, 0, 0, 0, 0, 0, 1, 0}
	b = append(append(append(b, 4), "shop"...), 0)
	b = append(append(append(b, 3), "doc"...), 0)
	b = append(b, 3, 3, 245, 15) // LONG, JSON, VARCHAR
	b = append(b, 3, 4, 160, 0)  // metadata: JSON length bytes 4, VARCHAR 160 bytes
	b = append(b, 0b110)         // null bitmap: j and name nullable
	tlv := func(typ byte, v []byte) { b = append(append(append(b, typ), lenencInt(len(v))...), v...) }
	tlv(1, []byte{0x80})                  // SIGNEDNESS: the one numeric column is unsigned
	tlv(2, []byte{255})                   // DEFAULT_CHARSET: utf8mb4_0900_ai_ci
	tlv(4, []byte("\x02id\x01j\x04name")) // COLUMN_NAME
	tlv(8, []byte{0})                     // SIMPLE_PRIMARY_KEY: column 0
	return b
}

// binary JSON (json_binary.h) for the small documents the tests need.
func jsonInt16(v int16) (byte, []byte) { return 5, binary.LittleEndian.AppendUint16(nil, uint16(v)) }
func jsonString(s string) (byte, []byte) {
	return 12, append([]byte{byte(len(s))}, s...)
}

type jsonVal struct {
	typ  byte
	data []byte
}

// jsonSmall builds a small object (keys != nil) or array.
func jsonSmall(keys []string, vals []jsonVal) (byte, []byte) {
	n := len(vals)
	hdr := 4
	if keys != nil {
		hdr += 4 * n
	}
	hdr += 3 * n
	var tail []byte
	keyOff := make([]int, n)
	for i, k := range keys {
		keyOff[i] = hdr + len(tail)
		tail = append(tail, k...)
	}
	entries := make([]byte, 0, 3*n)
	for _, v := range vals {
		if v.typ == 5 || v.typ == 4 { // int16 and literals inline
			entries = append(append(entries, v.typ), v.data...)
			continue
		}
		entries = append(entries, v.typ)
		entries = binary.LittleEndian.AppendUint16(entries, uint16(hdr+len(tail)))
		tail = append(tail, v.data...)
	}
	var out []byte
	out = binary.LittleEndian.AppendUint16(out, uint16(n))
	out = binary.LittleEndian.AppendUint16(out, uint16(hdr+len(tail)))
	for i, k := range keys {
		out = binary.LittleEndian.AppendUint16(out, uint16(keyOff[i]))
		out = binary.LittleEndian.AppendUint16(out, uint16(len(k)))
	}
	out = append(append(out, entries...), tail...)
	if keys != nil {
		return 0, out
	}
	return 2, out
}

func jsonDoc(typ byte, data []byte) []byte { return append([]byte{typ}, data...) }

// beforeDoc is {"a": 1, "b": [1, 2]}.
func beforeDoc() []byte {
	at, ad := jsonInt16(1)
	i1t, i1d := jsonInt16(1)
	i2t, i2d := jsonInt16(2)
	arrT, arrD := jsonSmall(nil, []jsonVal{{i1t, i1d}, {i2t, i2d}})
	return jsonDoc(jsonSmall([]string{"a", "b"}, []jsonVal{{at, ad}, {arrT, arrD}}))
}

// rowImage is the null bitmap and values of (id, j, name), all present.
func rowImage(id uint32, doc []byte, name string) []byte {
	b := []byte{0}
	b = binary.LittleEndian.AppendUint32(b, id)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(doc)))
	b = append(b, doc...)
	return append(append(b, byte(len(name))), name...)
}

func rowsHeader(columnBitmaps ...byte) []byte {
	b := []byte{100, 0, 0, 0, 0, 0, 1, 0, 2, 0, 3} // table 100, STMT_END_F, no extra data, 3 columns
	return append(b, columnBitmaps...)
}

// diffVector is Json_diff_vector::write_binary's form.
func diffVector(diffs ...[]byte) []byte {
	var b []byte
	for _, d := range diffs {
		b = append(b, d...)
	}
	return b
}

func diff(op byte, path string, value []byte) []byte {
	b := append(append([]byte{op}, lenencInt(len(path))...), path...)
	if op != 2 {
		b = append(append(b, lenencInt(len(value))...), value...)
	}
	return b
}

var testUUID = []byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}

// partialFile: transaction 1 inserts a row and updates its JSON column
// with three diffs (replace, insert, remove); transaction 2 is a partial
// update with a minimal before image (id only), which cannot be applied;
// transaction 3 inserts another row.
func partialFile() (*mysql84File, uint32) {
	f := newMySQL84File()
	f.event(42, taggedGTID(testUUID, "pitr", 7, 0, 1))
	f.event(2, queryEventBody("shop", "BEGIN"))
	f.event(19, tableMapFull())
	f.event(30, append(rowsHeader(0b111), rowImage(1, beforeDoc(), "x")...))
	five := jsonDoc(jsonInt16(5))
	nw := jsonDoc(jsonString("new"))
	dv := diffVector(diff(0, "$.a", five), diff(1, "$.c", nw), diff(2, "$.b[0]", nil))
	after := []byte{1, 0b1, 0} // value options PARTIAL_JSON, partial bitmap (j), null bitmap
	after = binary.LittleEndian.AppendUint32(after, 1)
	after = binary.LittleEndian.AppendUint32(after, uint32(len(dv)))
	after = append(append(append(after, dv...), 1), 'y')
	f.event(19, tableMapFull()) // each statement maps its tables again
	f.event(39, append(append(rowsHeader(0b111, 0b111), rowImage(1, beforeDoc(), "x")...), after...))
	f.event(16, make([]byte, 8)) // XID

	bad := f.event(42, taggedGTID(testUUID, "pitr", 8, 1, 2))
	f.event(2, queryEventBody("shop", "BEGIN"))
	f.event(19, tableMapFull())
	before := binary.LittleEndian.AppendUint32([]byte{0}, 1) // id only
	dv2 := diffVector(diff(0, "$.a", five))
	after2 := binary.LittleEndian.AppendUint32([]byte{1, 0b1, 0}, uint32(len(dv2)))
	after2 = append(after2, dv2...)
	f.event(39, append(append(rowsHeader(0b001, 0b010), before...), after2...))
	f.event(16, make([]byte, 8))

	f.event(42, taggedGTID(testUUID, "pitr", 9, 2, 3))
	f.event(2, queryEventBody("shop", "BEGIN"))
	f.event(19, tableMapFull())
	f.event(30, append(rowsHeader(0b111), rowImage(2, beforeDoc(), "z")...))
	f.event(16, make([]byte, 8))
	return f, bad
}

func TestApplyJSONDiffs(t *testing.T) {
	for _, c := range []struct {
		doc   string
		diffs []jsonDiff
		want  string // "" when it must fail
	}{
		{`{"a": 1}`, []jsonDiff{{op: 0, path: "$.a", value: `[1, {"x": null}]`}}, `{"a":[1,{"x":null}]}`},
		{`{"a": 1}`, []jsonDiff{{op: 1, path: "$.bb", value: `"v"`}, {op: 1, path: "$.c", value: `true`}}, `{"a":1,"c":true,"bb":"v"}`},
		{`{"a": {"b": [1, 2, 3]}}`, []jsonDiff{{op: 2, path: "$.a.b[1]"}}, `{"a":{"b":[1,3]}}`},
		{`[1, 2]`, []jsonDiff{{op: 1, path: "$[0]", value: `0`}, {op: 1, path: "$[9]", value: `9`}}, `[0,1,2,9]`},
		{`{"key with space": "é\"<"}`, []jsonDiff{{op: 0, path: `$."key with space"`, value: `"ü"`}}, `{"key with space":"ü"}`},
		{`{"k": "é\"<"}`, []jsonDiff{{op: 1, path: `$."<&>"`, value: `1.50`}}, `{"k":"é\"<","<&>":1.50}`},
		{`{"a": 1}`, []jsonDiff{{op: 0, path: "$", value: `2`}}, `2`},
		{`{"a": 1}`, []jsonDiff{{op: 0, path: "$.b", value: `2`}}, ""},
		{`{"a": 1}`, []jsonDiff{{op: 1, path: "$.a", value: `2`}}, ""},
		{`{"a": 1}`, []jsonDiff{{op: 2, path: "$.x.y"}}, ""},
		{`[1]`, []jsonDiff{{op: 2, path: "$[3]"}}, ""},
		{`{"a": 1}`, []jsonDiff{{op: 0, path: "a", value: `2`}}, ""},
	} {
		got, err := applyJSONDiffs(c.doc, c.diffs)
		if c.want == "" {
			if err == nil {
				t.Errorf("%s %v: want an error, got %s", c.doc, c.diffs, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s %v: got %s %v, want %s", c.doc, c.diffs, got, err, c.want)
		}
	}
}

// TestMySQLFixturesRead reads the real MySQL binlogs (see the README next
// to them): every transaction, the compressed payload's included.
func TestMySQLFixturesRead(t *testing.T) {
	const dir = "/work/shared/fixtures/mysql/"
	for _, c := range []struct {
		file       string
		txns, rows int
		incomplete bool
	}{
		{file: "mysql-bin.checksum-crc32", txns: 60},
		{file: "mysql-bin.compressed", txns: 1, rows: 1},
		{file: "mysql-bin.aurora-padding", txns: 0, incomplete: true},
	} {
		txns, err := decodeFiles([]string{dir + c.file})
		if c.incomplete != errors.Is(err, ErrIncomplete) || !c.incomplete && err != nil {
			t.Errorf("%s: %v", c.file, err)
		}
		rows := 0
		for _, tx := range txns {
			rows += tx.Rows()
		}
		if len(txns) != c.txns || c.rows > 0 && rows != c.rows {
			t.Errorf("%s: %d transactions, %d rows; want %d, %d", c.file, len(txns), rows, c.txns, c.rows)
		}
	}
}
