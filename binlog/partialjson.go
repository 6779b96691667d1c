package binlog

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// MySQL 8's binlog_row_value_options=PARTIAL_JSON logs an UPDATE of a JSON
// column made by JSON_SET, JSON_REPLACE or JSON_REMOVE as a diff against
// the before image (PARTIAL_UPDATE_ROWS_EVENT, libbinlogevents
// rows_event.h; the diff format is Json_diff_vector::write_binary in
// sql/json_diff.cc: per diff, an operation byte, the path as a
// length-encoded string, and for replace and insert the value as a
// length-encoded binary JSON document). go-mysql decodes only the first
// diff of a column, so prepl reads them all here and computes the after
// image from the full before image, as the server does.

// partialJSON is the after value of a JSON column logged as diffs; the
// assembler replaces it with the computed document.
type partialJSON struct{ diffs []jsonDiff }

type jsonDiff struct {
	op    replication.JsonDiffOperation
	path  string
	value string // the new value as JSON text (go-mysql's MySQL rendering)
}

// ErrPartialJSON is a partial JSON update that cannot be applied: its
// before image lacks the column (binlog_row_image=MINIMAL), or a path
// the document does not have.
var ErrPartialJSON = errors.New("partial JSON update cannot be applied")

// rowsEventType is a rows event's type, which go-mysql keeps unexported
// (its Type does not know PARTIAL_UPDATE_ROWS_EVENT or compression).
func rowsEventType(e *replication.RowsEvent) replication.EventType {
	return replication.EventType(reflect.ValueOf(e).Elem().Field(eventTypeField).Uint())
}

// eventTypeField is the index of RowsEvent's eventType field, found once:
// looking it up by name for every event cost more than decoding a row.
var eventTypeField = func() int {
	f, ok := reflect.TypeFor[replication.RowsEvent]().FieldByName("eventType")
	if !ok || len(f.Index) != 1 || f.Type.Kind() != reflect.Uint8 {
		panic("go-mysql's RowsEvent has no eventType byte: update rowsEventType for this go-mysql version")
	}
	return f.Index[0]
}()

// readPartialJSON walks a PARTIAL_UPDATE_ROWS_EVENT's images from pos (the
// first row) and replaces each partial JSON after value with its diffs.
func readPartialJSON(e *replication.RowsEvent, data []byte, pos int) error {
	tm := e.Table
	n := int(e.ColumnCount)
	jsonCols := 0
	for _, t := range tm.ColumnType {
		if t == mysql.MYSQL_TYPE_JSON {
			jsonCols++
		}
	}
	bm1, bm2 := e.ColumnBitmap1, e.ColumnBitmap2
	for r := 0; pos < len(data); r += 2 {
		var err error
		if pos, err = skipImage(tm, n, bm1, data, pos, nil); err != nil {
			return fmt.Errorf("before image of row %d: %w", r/2+1, err)
		}
		opts, _, k := mysql.LengthEncodedInt(data[pos:])
		pos += k
		var partial []byte
		if opts&1 != 0 {
			nb := (jsonCols + 7) / 8
			if pos+nb > len(data) {
				return errors.New("partial bitmap past the event's end")
			}
			partial = data[pos : pos+nb]
			pos += nb
		}
		if r+1 >= len(e.Rows) {
			return errors.New("more row images than go-mysql decoded")
		}
		after := e.Rows[r+1]
		if pos, err = skipImage(tm, n, bm2, data, pos, func(col, jsonIdx int, raw []byte) error {
			if partial == nil || partial[jsonIdx/8]&(1<<(jsonIdx%8)) == 0 {
				return nil
			}
			diffs, err := parseDiffVector(raw)
			if err != nil {
				return fmt.Errorf("column %d: %w", col+1, err)
			}
			after[col] = &partialJSON{diffs}
			return nil
		}); err != nil {
			return fmt.Errorf("after image of row %d: %w", r/2+1, err)
		}
	}
	return nil
}

// skipImage steps over one row image (null bitmap, then the values of the
// columns set in bitmap) and calls jsonVal with the bytes of each non-NULL
// JSON value (without its length) and the column's index among the
// table's JSON columns.
func skipImage(tm *replication.TableMapEvent, n int, bitmap, data []byte, pos int, jsonVal func(col, jsonIdx int, raw []byte) error) (int, error) {
	present := 0
	for c := 0; c < n; c++ {
		if bitmap[c/8]&(1<<(c%8)) != 0 {
			present++
		}
	}
	nb := (present + 7) / 8
	if pos+nb > len(data) {
		return 0, errors.New("null bitmap past the event's end")
	}
	nulls := data[pos : pos+nb]
	pos += nb
	idx, jsonIdx := 0, 0
	for c := 0; c < n; c++ {
		isJSON := tm.ColumnType[c] == mysql.MYSQL_TYPE_JSON
		if bitmap[c/8]&(1<<(c%8)) == 0 {
			if isJSON {
				jsonIdx++
			}
			continue
		}
		null := nulls[idx/8]&(1<<(idx%8)) != 0
		idx++
		if null {
			if isJSON {
				jsonIdx++
			}
			continue
		}
		size, err := fieldSize(tm.ColumnType[c], tm.ColumnMeta[c], data[pos:])
		if err != nil {
			return 0, fmt.Errorf("column %d: %w", c+1, err)
		}
		if pos+size > len(data) {
			return 0, fmt.Errorf("column %d: value past the event's end", c+1)
		}
		if isJSON {
			if jsonVal != nil {
				m := int(tm.ColumnMeta[c])
				if err := jsonVal(c, jsonIdx, data[pos+m:pos+size]); err != nil {
					return 0, err
				}
			}
			jsonIdx++
		}
		pos += size
	}
	return pos, nil
}

// fieldSize is the bytes a value of a column takes in a row image
// (calc_field_size in the server's log_event.cc). The event guard's row
// count (countRows) uses it too.
func fieldSize(typ byte, meta uint16, data []byte) (int, error) {
	lenPrefixed := func(lenBytes int) (int, error) {
		if len(data) < lenBytes {
			return 0, errors.New("length past the event's end")
		}
		var l int
		for i := lenBytes - 1; i >= 0; i-- {
			l = l<<8 | int(data[i])
		}
		return lenBytes + l, nil
	}
	switch typ {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_YEAR:
		return 1, nil
	case mysql.MYSQL_TYPE_SHORT:
		return 2, nil
	case mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE, mysql.MYSQL_TYPE_TIME:
		return 3, nil
	case mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_TIMESTAMP:
		return 4, nil
	case mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_DATETIME:
		return 8, nil
	case mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_DOUBLE:
		return int(meta), nil
	case mysql.MYSQL_TYPE_TIMESTAMP2:
		return 4 + (int(meta)+1)/2, nil
	case mysql.MYSQL_TYPE_DATETIME2:
		return 5 + (int(meta)+1)/2, nil
	case mysql.MYSQL_TYPE_TIME2:
		return 3 + (int(meta)+1)/2, nil
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		prec, scale := int(meta>>8), int(meta&0xff)
		if scale > prec {
			return 0, fmt.Errorf("decimal scale %d over its precision %d", scale, prec)
		}
		dig := [...]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}
		intg := prec - scale
		return intg/9*4 + dig[intg%9] + scale/9*4 + dig[scale%9], nil
	case mysql.MYSQL_TYPE_BIT:
		return (int(meta>>8)*8 + int(meta&0xff) + 7) / 8, nil
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		if meta > 255 {
			return lenPrefixed(2)
		}
		return lenPrefixed(1)
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_GEOMETRY, mysql.MYSQL_TYPE_JSON, mysql.MYSQL_TYPE_VECTOR:
		if meta < 1 || meta > 4 {
			return 0, fmt.Errorf("blob length size %d", meta)
		}
		return lenPrefixed(int(meta))
	case mysql.MYSQL_TYPE_STRING:
		real := byte(meta >> 8)
		if real == mysql.MYSQL_TYPE_ENUM || real == mysql.MYSQL_TYPE_SET {
			return int(meta & 0xff), nil
		}
		l := int((meta>>4)&0x300^0x300) + int(meta&0xff)
		if l > 255 {
			return lenPrefixed(2)
		}
		return lenPrefixed(1)
	case mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
		return int(meta & 0xff), nil
	}
	return 0, fmt.Errorf("column type %d in a partial update event", typ)
}

// parseDiffVector reads the diffs of one column.
func parseDiffVector(b []byte) ([]jsonDiff, error) {
	var out []jsonDiff
	for len(b) > 0 {
		op := replication.JsonDiffOperation(b[0])
		if op > replication.JsonDiffOperationRemove {
			return nil, fmt.Errorf("JSON diff operation %d", op)
		}
		b = b[1:]
		pl, _, k := mysql.LengthEncodedInt(b)
		if k == 0 || uint64(len(b)-k) < pl {
			return nil, errors.New("JSON diff path past the value's end")
		}
		d := jsonDiff{op: op, path: string(b[k : k+int(pl)])}
		b = b[k+int(pl):]
		if op != replication.JsonDiffOperationRemove {
			vl, _, k := mysql.LengthEncodedInt(b)
			if k == 0 || uint64(len(b)-k) < vl {
				return nil, errors.New("JSON diff value past the value's end")
			}
			text, err := jsonBinaryText(b[k : k+int(vl)])
			if err != nil {
				return nil, fmt.Errorf("JSON diff value at %s: %w", d.path, err)
			}
			d.value = text
			b = b[k+int(vl):]
		}
		out = append(out, d)
	}
	return out, nil
}

// jsonBinaryText renders a MySQL binary JSON document as the text
// go-mysql gives full JSON values: it decodes a one-column rows event that
// holds it, with a parser set up as prepl's.
var jsonText struct {
	sync.Mutex
	p *replication.BinlogParser
}

// mysql80PostHeader is MySQL 8.0's post-header length per event type.
var mysql80PostHeader = []byte{0, 13, 0, 8, 0, 0, 0, 0, 4, 0, 4, 0, 0, 0, 98, 0, 4, 26, 8, 0, 0, 0, 8, 8, 8, 2, 0, 0, 0, 10, 10, 10, 42, 42, 0, 18, 52, 0, 10, 40, 0, 0}

func rawEvent(typ replication.EventType, body []byte) []byte {
	ev := make([]byte, 19, 19+len(body))
	ev[4] = byte(typ)
	binary.LittleEndian.PutUint32(ev[5:], 1)
	binary.LittleEndian.PutUint32(ev[9:], uint32(19+len(body)))
	return append(ev, body...)
}

func jsonBinaryText(bin []byte) (string, error) {
	jsonText.Lock()
	defer jsonText.Unlock()
	if jsonText.p == nil {
		p := newParser()
		fde := append([]byte{4, 0}, make([]byte, 50+4)...)
		copy(fde[2:], "8.0.28")
		fde = append(append(append(fde, 19), mysql80PostHeader...), 0, 0, 0, 0, 0) // checksum off
		if _, err := p.Parse(rawEvent(replication.FORMAT_DESCRIPTION_EVENT, fde)); err != nil {
			return "", err
		}
		// Table map: id 1, j.j (one JSON column, length bytes 4, nullable).
		tm := []byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 'j', 0, 1, 'j', 0, 1, mysql.MYSQL_TYPE_JSON, 1, 4, 1}
		if _, err := p.Parse(rawEvent(replication.TABLE_MAP_EVENT, tm)); err != nil {
			return "", err
		}
		jsonText.p = p
	}
	body := []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 1, 0}
	body = binary.LittleEndian.AppendUint32(body, uint32(len(bin)))
	body = append(body, bin...)
	ev, err := jsonText.p.Parse(rawEvent(replication.WRITE_ROWS_EVENTv2, body))
	if err != nil {
		return "", err
	}
	re, ok := ev.Event.(*replication.RowsEvent)
	if !ok || len(re.Rows) != 1 || len(re.Rows[0]) != 1 {
		return "", errors.New("undecodable binary JSON")
	}
	switch v := re.Rows[0][0].(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("binary JSON decoded as %T", re.Rows[0][0])
}

// resolvePartialJSON replaces each partial JSON value of an update's after
// image with the document the diffs make of the before image's.
func resolvePartialJSON(tbl *txn.Table, before, after []any, bm1 []byte) error {
	for c, v := range after {
		p, ok := v.(*partialJSON)
		if !ok {
			continue
		}
		var doc string
		switch b := before[c].(type) {
		case string:
			doc = b
		case []byte:
			doc = string(b)
		default:
			why := "NULL"
			if c/8 >= len(bm1) || bm1[c/8]&(1<<(c%8)) == 0 {
				why = "absent (binlog_row_image=MINIMAL or NOBLOB)"
			}
			return fmt.Errorf("%w: %s column %d is a diff but its before image is %s, so the new document is unknown",
				ErrPartialJSON, tbl.QualifiedName(), c+1, why)
		}
		out, err := applyJSONDiffs(doc, p.diffs)
		if err != nil {
			return fmt.Errorf("%w: %s column %d: %v", ErrPartialJSON, tbl.QualifiedName(), c+1, err)
		}
		after[c] = out
	}
	return nil
}

// jnode is a JSON document parsed just enough to edit it: scalars keep
// their text as rendered, so unchanged parts print exactly as before.
type jnode struct {
	kind byte // '{', '[' or 0 for a scalar
	raw  string
	keys []string // decoded object keys
	rawk []string // the keys as written
	vals []*jnode
}

func applyJSONDiffs(doc string, diffs []jsonDiff) (string, error) {
	root, err := parseJNode(doc)
	if err != nil {
		return "", fmt.Errorf("before image: %v", err)
	}
	for _, d := range diffs {
		legs, err := parseJSONPath(d.path)
		if err != nil {
			return "", err
		}
		var val *jnode
		if d.op != replication.JsonDiffOperationRemove {
			if val, err = parseJNode(d.value); err != nil {
				return "", fmt.Errorf("value at %s: %v", d.path, err)
			}
		}
		if len(legs) == 0 {
			if d.op != replication.JsonDiffOperationReplace {
				return "", fmt.Errorf("%s of the whole document", d.op)
			}
			root = val
			continue
		}
		parent := root
		for _, l := range legs[:len(legs)-1] {
			if parent = parent.child(l); parent == nil {
				return "", fmt.Errorf("path %s: the document has no %v", d.path, l)
			}
		}
		if err := parent.edit(d.op, legs[len(legs)-1], val); err != nil {
			return "", fmt.Errorf("path %s: %v", d.path, err)
		}
	}
	var b strings.Builder
	root.write(&b)
	return b.String(), nil
}

// A path leg is a member name (string) or an array index (int).
func (n *jnode) child(leg any) *jnode {
	switch l := leg.(type) {
	case string:
		if n.kind == '{' {
			for i, k := range n.keys {
				if k == l {
					return n.vals[i]
				}
			}
		}
	case int:
		if n.kind == '[' && l < len(n.vals) {
			return n.vals[l]
		}
	}
	return nil
}

func (n *jnode) edit(op replication.JsonDiffOperation, leg any, val *jnode) error {
	switch l := leg.(type) {
	case string:
		if n.kind != '{' {
			return errors.New("member of a value that is not an object")
		}
		i := 0
		for i < len(n.keys) && n.keys[i] != l {
			i++
		}
		found := i < len(n.keys)
		switch {
		case op == replication.JsonDiffOperationReplace && found:
			n.vals[i] = val
		case op == replication.JsonDiffOperationInsert && !found:
			// MySQL keeps object members sorted by key length, then bytes.
			j := 0
			for j < len(n.keys) && (len(n.keys[j]) < len(l) || len(n.keys[j]) == len(l) && n.keys[j] < l) {
				j++
			}
			var kb strings.Builder
			enc := json.NewEncoder(&kb)
			enc.SetEscapeHTML(false)
			enc.Encode(l)
			n.keys = append(n.keys[:j], append([]string{l}, n.keys[j:]...)...)
			n.rawk = append(n.rawk[:j], append([]string{strings.TrimSuffix(kb.String(), "\n")}, n.rawk[j:]...)...)
			n.vals = append(n.vals[:j], append([]*jnode{val}, n.vals[j:]...)...)
		case op == replication.JsonDiffOperationRemove && found:
			n.keys = append(n.keys[:i], n.keys[i+1:]...)
			n.rawk = append(n.rawk[:i], n.rawk[i+1:]...)
			n.vals = append(n.vals[:i], n.vals[i+1:]...)
		default:
			return fmt.Errorf("%s of member %q, which the document has: %v", op, l, found)
		}
	case int:
		if n.kind != '[' {
			return errors.New("index of a value that is not an array")
		}
		switch {
		case op == replication.JsonDiffOperationReplace && l < len(n.vals):
			n.vals[l] = val
		case op == replication.JsonDiffOperationInsert:
			l = min(l, len(n.vals))
			n.vals = append(n.vals[:l], append([]*jnode{val}, n.vals[l:]...)...)
		case op == replication.JsonDiffOperationRemove && l < len(n.vals):
			n.vals = append(n.vals[:l], n.vals[l+1:]...)
		default:
			return fmt.Errorf("%s of element %d of an array of %d", op, l, len(n.vals))
		}
	}
	return nil
}

// write renders as go-mysql renders full JSON values: no spaces.
func (n *jnode) write(b *strings.Builder) {
	switch n.kind {
	case '{':
		b.WriteByte('{')
		for i, k := range n.rawk {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(k)
			b.WriteByte(':')
			n.vals[i].write(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b)
		}
		b.WriteByte(']')
	default:
		b.WriteString(n.raw)
	}
}

func parseJNode(s string) (*jnode, error) {
	p := &jparser{s: s}
	n, err := p.value()
	if err == nil {
		p.space()
		if p.i != len(p.s) {
			err = fmt.Errorf("text after the document at %d", p.i)
		}
	}
	return n, err
}

type jparser struct {
	s string
	i int
}

func (p *jparser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *jparser) value() (*jnode, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, errors.New("unexpected end")
	}
	switch c := p.s[p.i]; c {
	case '{', '[':
		p.i++
		n := &jnode{kind: c}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return n, nil
		}
		for {
			if c == '{' {
				p.space()
				raw, err := p.str()
				if err != nil {
					return nil, err
				}
				var k string
				if err := json.Unmarshal([]byte(raw), &k); err != nil {
					return nil, err
				}
				p.space()
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					return nil, fmt.Errorf("want : at %d", p.i)
				}
				p.i++
				n.keys, n.rawk = append(n.keys, k), append(n.rawk, raw)
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
			p.space()
			if p.i >= len(p.s) {
				return nil, errors.New("unexpected end")
			}
			if p.s[p.i] == end {
				p.i++
				return n, nil
			}
			if p.s[p.i] != ',' {
				return nil, fmt.Errorf("want , at %d", p.i)
			}
			p.i++
		}
	case '"':
		raw, err := p.str()
		return &jnode{raw: raw}, err
	default:
		j := p.i
		for j < len(p.s) && strings.IndexByte(",]} \t\r\n", p.s[j]) < 0 {
			j++
		}
		if j == p.i {
			return nil, fmt.Errorf("unexpected %q at %d", p.s[p.i], p.i)
		}
		n := &jnode{raw: p.s[p.i:j]}
		p.i = j
		return n, nil
	}
}

func (p *jparser) str() (string, error) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", fmt.Errorf("want a string at %d", p.i)
	}
	for j := p.i + 1; j < len(p.s); j++ {
		switch p.s[j] {
		case '\\':
			j++
		case '"':
			raw := p.s[p.i : j+1]
			p.i = j + 1
			return raw, nil
		}
	}
	return "", errors.New("unterminated string")
}

// parseJSONPath reads a MySQL JSON path as the server logs it: $, then
// .member, ."quoted member" or [index] legs.
func parseJSONPath(path string) ([]any, error) {
	if !strings.HasPrefix(path, "$") {
		return nil, fmt.Errorf("JSON path %q does not start with $", path)
	}
	var legs []any
	s := path[1:]
	for len(s) > 0 {
		switch s[0] {
		case '.':
			s = s[1:]
			if strings.HasPrefix(s, `"`) {
				p := &jparser{s: s}
				raw, err := p.str()
				if err != nil {
					return nil, fmt.Errorf("JSON path %q: %v", path, err)
				}
				var k string
				if err := json.Unmarshal([]byte(raw), &k); err != nil {
					return nil, fmt.Errorf("JSON path %q: %v", path, err)
				}
				legs, s = append(legs, k), s[p.i:]
				continue
			}
			j := strings.IndexAny(s, ".[")
			if j < 0 {
				j = len(s)
			}
			if j == 0 {
				return nil, fmt.Errorf("JSON path %q: empty member name", path)
			}
			legs, s = append(legs, s[:j]), s[j:]
		case '[':
			j := strings.IndexByte(s, ']')
			if j < 0 {
				return nil, fmt.Errorf("JSON path %q: no ]", path)
			}
			i, err := strconv.Atoi(strings.TrimSpace(s[1:j]))
			if err != nil || i < 0 {
				return nil, fmt.Errorf("JSON path %q: index %q", path, s[1:j])
			}
			legs, s = append(legs, i), s[j+1:]
		default:
			return nil, fmt.Errorf("JSON path %q: unexpected %q", path, s[0])
		}
	}
	return legs, nil
}
