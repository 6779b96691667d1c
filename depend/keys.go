package depend

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/prepl/prepl/txn"
)

// Lock is one key of a transaction's writeset, held from its start until it
// is Done. Two transactions conflict when they hold the same Key and at
// least one of them holds it exclusively.
//
// Keys are 64-bit hashes of two kinds:
//   - a row key: (schema, table, index, normalized values of the index
//     columns) for the primary key and every unique key, over before and
//     after images (of a key WITHOUT OVERLAPS, the columns before its
//     period: keyColumns); exclusive. A foreign key reference to a parent row is
//     the parent's row key, shared (two children of one parent row do not
//     conflict).
//   - a table key: (schema, table). Every row change holds it shared, as an
//     intention; a change whose rows cannot be named by a key (no primary or
//     unique key, a key column missing from the image) holds it exclusively
//     and so conflicts with every change of the table.
//
// A hash collision only adds a conflict.
type Lock struct {
	Key    uint64
	Shared bool
	Reason Reason // what a wait on this lock is counted as (ReasonNone for a table intention)
}

// Keys returns the writeset of tx, or the reason it is a barrier (then locks
// is nil): it is DDL, XA, non-transactional, holds a statement, touches a
// table that is unknown to cat, is not transactional or has triggers on
// the target, or makes a change that can set off a cascading foreign key
// (its effects are not in the binlog: the target's foreign keys redo
// them, on rows no key names). A foreign key parent is otherwise a table
// like any other: RESTRICT and NO ACTION only check what the source
// checked, and a child row's reference keys the parent row (reference).
func Keys(tx *txn.Txn, cat txn.Catalog) (locks []Lock, barrier Reason) {
	if r := txBarrier(tx); r != ReasonNone {
		return nil, r
	}
	// A table key and a row key or two per change, before duplicates.
	ks := keySet{locks: make([]Lock, 0, min(2+2*len(tx.Changes), 256))}
	var last *txn.Table // the table of the change before, and its definition
	var def *txn.TableDef
	for _, c := range tx.Changes {
		rc := c.Row
		if rc == nil {
			continue
		}
		if rc.Table != last || last == nil {
			var r Reason
			if def, r = lookup(cat, rc.Table); r != ReasonNone {
				return nil, r
			}
			last = rc.Table
		}
		if def.CanCascade(rc) {
			return nil, ReasonForeignKey
		}
		ks.row(cat, def, rc)
	}
	return ks.locks, ReasonNone
}

// lookup finds the definition of a row change's table, or says why the
// change must be a barrier.
func lookup(cat txn.Catalog, t *txn.Table) (*txn.TableDef, Reason) {
	if cat == nil || t == nil {
		return nil, ReasonUnknownTable
	}
	def, ok := cat.Table(t.Schema, t.Name)
	switch {
	case !ok || def == nil:
		return nil, ReasonUnknownTable
	case !def.Transactional:
		return nil, ReasonNonTransactional
	case def.HasTriggers:
		return nil, ReasonTrigger
	}
	return def, ReasonNone
}

// keySet collects locks without duplicates; exclusive wins over shared.
// A few locks are searched in order; idx indexes them past smallSet.
type keySet struct {
	locks []Lock
	idx   map[uint64]int

	// The table key and the row key prefixes of the table last seen: the
	// row changes of a transaction mostly share one table.
	def    *txn.TableDef
	table  uint64
	prefix []hasher // per index of def
}

const smallSet = 16

func (ks *keySet) find(key uint64) (int, bool) {
	if ks.idx != nil {
		i, ok := ks.idx[key]
		return i, ok
	}
	for i := range ks.locks {
		if ks.locks[i].Key == key {
			return i, true
		}
	}
	return 0, false
}

func (ks *keySet) add(key uint64, shared bool, why Reason) {
	if i, ok := ks.find(key); ok {
		if l := &ks.locks[i]; l.Shared && !shared {
			l.Shared, l.Reason = false, why
		}
		return
	}
	ks.locks = append(ks.locks, Lock{Key: key, Shared: shared, Reason: why})
	switch n := len(ks.locks); {
	case ks.idx != nil:
		ks.idx[key] = n - 1
	case n > smallSet:
		ks.idx = make(map[uint64]int, 2*n)
		for i, l := range ks.locks {
			ks.idx[l.Key] = i
		}
	}
}

// useTable makes def the table whose keys ks.table and ks.prefix hold.
func (ks *keySet) useTable(def *txn.TableDef) {
	if ks.def == def {
		return
	}
	ks.def, ks.table = def, tableKey(def.Schema, def.Name)
	ks.prefix = ks.prefix[:0]
	for i := range def.Indexes {
		ks.prefix = append(ks.prefix, rowKeyPrefix(def, &def.Indexes[i]))
	}
}

func (ks *keySet) row(cat txn.Catalog, def *txn.TableDef, rc *txn.RowChange) {
	ks.useTable(def)
	table := ks.table
	ks.add(table, true, ReasonNone)
	if len(def.Indexes) == 0 {
		ks.add(table, false, ReasonNoKey)
	}
	imgs := [2]image{{rc.Before, rc.BeforeCols}, {rc.After, rc.AfterCols}}
	for _, img := range imgs {
		if img.vals == nil {
			continue
		}
		for i := range def.Indexes {
			ix := &def.Indexes[i]
			switch img.state(keyColumns(ix)) {
			case absent:
				ks.add(table, false, ReasonNoKey)
			case present:
				ks.add(rowKeyFrom(ks.prefix[i], def, ix, img.vals), false, ReasonKeyConflict)
			}
		}
		for i := range def.ForeignKeys {
			if KeepsReference(def, &def.ForeignKeys[i], rc) {
				continue
			}
			ks.reference(cat, def, &def.ForeignKeys[i], img)
		}
	}
}

// KeepsReference reports whether rc is an update that leaves its row's
// reference through fk as it was (unchangedReference): the writeset then
// holds no reference to the parent row for it.
func KeepsReference(def *txn.TableDef, fk *txn.ForeignKeyDef, rc *txn.RowChange) bool {
	if rc.Before == nil || rc.After == nil {
		return false
	}
	return unchangedReference(def, fk, image{rc.Before, rc.BeforeCols}, image{rc.After, rc.AfterCols})
}

// unchangedReference reports whether an update leaves the row's reference
// through fk as it was, with the index entry that holds it: the foreign
// key's columns and every key's (the clustered key is part of every
// secondary index entry) are in both images and equal. The target then
// checks nothing for it and locks no parent row (InnoDB checks a child's
// foreign key when it inserts the entry of the index that holds it: an
// insert, or an update that changes that entry; PostgreSQL checks an
// update when the key changed, or when the row is the transaction's own,
// whose insert holds the reference), and no ordering is lost: the row
// referenced the same parent row before and after, so that row existed
// throughout, and a change to it in flight does not concern the update.
// Values are compared as they are (a collation's equal but different
// strings count as a change, which keeps the reference).
func unchangedReference(def *txn.TableDef, fk *txn.ForeignKeyDef, before, after image) bool {
	same := func(cols []int) bool {
		if before.state(cols) == absent || after.state(cols) == absent {
			return false
		}
		for _, c := range cols {
			if !sameValue(before.vals[c], after.vals[c]) {
				return false
			}
		}
		return true
	}
	if !same(fk.Columns) {
		return false
	}
	for i := range def.Indexes {
		if !same(def.Indexes[i].Columns) {
			return false
		}
	}
	return true
}

// sameValue reports whether two values of one column are identical.
func sameValue(a, b txn.Value) bool {
	switch x := a.(type) {
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case float64: // bit for bit: -0 is a change
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	}
	return reflect.DeepEqual(a, b)
}

// reference locks, shared, the parent row a child row points to, keyed as
// the parent's own unique index over the referenced columns would key it.
func (ks *keySet) reference(cat txn.Catalog, child *txn.TableDef, fk *txn.ForeignKeyDef, img image) {
	vals, st := img.values(fk.Columns)
	if st == hasNull {
		return // MATCH SIMPLE: a NULL part references nothing
	}
	schema := fk.RefSchema
	if schema == "" {
		schema = child.Schema
	}
	var parent *txn.TableDef
	ok := false
	if cat != nil {
		parent, ok = cat.Table(schema, fk.RefTable)
	}
	if !ok || parent == nil {
		ks.add(tableKey(schema, fk.RefTable), false, ReasonForeignKey)
		return
	}
	ptable := tableKey(parent.Schema, parent.Name)
	ix, order := matchIndex(parent, fk)
	if st == absent || ix == nil {
		ks.add(ptable, false, ReasonForeignKey)
		return
	}
	ks.add(ptable, true, ReasonNone)
	pvals := make([]txn.Value, len(ix.Columns))
	for j, k := range order {
		pvals[j] = vals[k]
	}
	ks.add(rowKey(parent, ix, pvals), true, ReasonForeignKey)
}

// matchIndex finds the parent's primary or unique key made of exactly the
// referenced columns; order[j] is the position in fk.RefColumns of the
// index's j-th column.
func matchIndex(parent *txn.TableDef, fk *txn.ForeignKeyDef) (*txn.IndexDef, []int) {
	if len(fk.RefColumns) != len(fk.Columns) {
		return nil, nil
	}
next:
	for i := range parent.Indexes {
		ix := &parent.Indexes[i]
		if len(ix.Columns) != len(fk.RefColumns) || ix.WithoutOverlaps {
			continue
		}
		order := make([]int, len(ix.Columns))
		for j, c := range ix.Columns {
			if c < 0 || c >= len(parent.Columns) {
				continue next
			}
			k := indexFold(fk.RefColumns, parent.Columns[c].Name)
			if k < 0 {
				continue next
			}
			order[j] = k
		}
		return ix, order
	}
	return nil, nil
}

func indexFold(names []string, name string) int {
	for i, n := range names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

// image is one row image with its column bitmap.
type image struct {
	vals []txn.Value
	cols []bool
}

type keyState uint8

const (
	present keyState = iota
	hasNull          // a key part is NULL: no key
	absent           // a key part is not in the image: table-wide
)

// state says whether the image has every column of cols, not NULL. A
// missing column wins over a NULL: the row may still collide on the
// columns we cannot see.
func (im image) state(cols []int) keyState {
	st := present
	for _, c := range cols {
		if c < 0 || c >= len(im.vals) || (im.cols != nil && (c >= len(im.cols) || !im.cols[c])) {
			return absent
		}
		if im.vals[c] == nil {
			st = hasNull
		}
	}
	return st
}

// values returns the image's values at cols, and their state.
func (im image) values(cols []int) ([]txn.Value, keyState) {
	st := im.state(cols)
	if st == absent {
		return nil, absent
	}
	vals := make([]txn.Value, len(cols))
	for i, c := range cols {
		vals[i] = im.vals[c]
	}
	return vals, st
}

// FNV-1a, with every field length-prefixed so that fields cannot run into
// each other.
type hasher uint64

func newHasher(kind byte) hasher {
	h := hasher(14695981039346656037)
	h.byte(kind)
	return h
}

func (h *hasher) byte(b byte) { *h = (*h ^ hasher(b)) * 1099511628211 }

func (h *hasher) bytes(b []byte) {
	h.u64(uint64(len(b)))
	for _, c := range b {
		h.byte(c)
	}
}

func (h *hasher) str(s string) {
	h.u64(uint64(len(s)))
	for i := 0; i < len(s); i++ {
		h.byte(s[i])
	}
}

// fixed hashes a value of 8 bytes with its tag, as normalize and bytes
// would.
func (h *hasher) fixed(tag byte, v uint64) {
	h.byte(tag)
	h.u64(8)
	h.u64(v)
}

func (h *hasher) u64(v uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	for _, c := range b {
		h.byte(c)
	}
}

// Identifiers are folded to lower case: merging tables that a
// case-sensitive server keeps apart only adds conflicts.
func tableKey(schema, table string) uint64 {
	h := newHasher('T')
	h.str(strings.ToLower(schema))
	h.str(strings.ToLower(table))
	return uint64(h)
}

// rowKey hashes vals, the values of index ix of def.
func rowKey(def *txn.TableDef, ix *txn.IndexDef, vals []txn.Value) uint64 {
	h := rowKeyPrefix(def, ix)
	for i, v := range vals {
		h.value(v, def, ix, i)
	}
	return uint64(h)
}

// rowKeyPrefix hashes what a row key of index ix of def starts with.
func rowKeyPrefix(def *txn.TableDef, ix *txn.IndexDef) hasher {
	h := newHasher('R')
	h.str(strings.ToLower(def.Schema))
	h.str(strings.ToLower(def.Name))
	h.str(strings.ToLower(ix.Name))
	return h
}

// keyColumns are the columns of ix a row key hashes: all of them, but
// for a key WITHOUT OVERLAPS only those before the period, as rows that
// share them conflict when their periods overlap, whatever the bounds (a
// key of the period alone makes every row of the table one key).
func keyColumns(ix *txn.IndexDef) []int {
	if ix.WithoutOverlaps && len(ix.Columns) >= 2 {
		return ix.Columns[:len(ix.Columns)-2]
	}
	return ix.Columns
}

// rowKeyFrom is rowKey of the index's columns of img (keyColumns), from
// the index's rowKeyPrefix h.
func rowKeyFrom(h hasher, def *txn.TableDef, ix *txn.IndexDef, img []txn.Value) uint64 {
	for i, c := range keyColumns(ix) {
		h.value(img[c], def, ix, i)
	}
	return uint64(h)
}

// value hashes v, the i-th column of index ix of def, normalized.
func (h *hasher) value(v txn.Value, def *txn.TableDef, ix *txn.IndexDef, i int) {
	var col *txn.ColumnDef
	if c := ix.Columns[i]; c >= 0 && c < len(def.Columns) {
		col = &def.Columns[c]
	}
	switch x := v.(type) { // the common fixed-size values, without normalize's allocation
	case int64:
		h.fixed('i', uint64(unsignedMask(x, col)))
		return
	case txn.Enum:
		h.fixed('E', uint64(x))
		return
	}
	prefix := 0
	if i < len(ix.Prefix) {
		prefix = ix.Prefix[i]
	}
	tag, b := normalize(v, col, prefix)
	h.byte(tag)
	h.bytes(b)
}

// normalize returns a type tag and bytes such that values equal under the
// column's comparison get equal results. prefix > 0 compares only the
// first prefix characters (bytes of a binary string), as a prefix index
// does.
func normalize(v txn.Value, col *txn.ColumnDef, prefix int) (byte, []byte) {
	switch x := v.(type) {
	case int64:
		return 'i', u64bytes(uint64(unsignedMask(x, col)))
	case int:
		return 'i', u64bytes(uint64(unsignedMask(int64(x), col)))
	case uint64:
		return 'i', u64bytes(x)
	case float32:
		return 'f', u64bytes(floatBits(float64(x)))
	case float64:
		return 'f', u64bytes(floatBits(x))
	case txn.Decimal:
		return 'd', []byte(normDecimal(string(x)))
	case txn.Temporal:
		return 't', []byte(normTemporal(string(x)))
	case txn.Bit:
		return 'B', u64bytes(uint64(x))
	case txn.Enum:
		return 'E', u64bytes(uint64(x))
	case txn.Set:
		return 'S', u64bytes(uint64(x))
	case []byte:
		return normBytes(x, col, prefix)
	case string:
		return normBytes([]byte(x), col, prefix)
	}
	return '?', fmt.Appendf(nil, "%T:%v", v, v)
}

func normBytes(b []byte, col *txn.ColumnDef, prefix int) (byte, []byte) {
	if col == nil {
		if prefix > 0 {
			return 'b', nil // cannot tell characters from bytes: one key
		}
		return 'b', b
	}
	if isText(col) {
		return 's', foldText(b, col.Charset, col.Collation, prefix)
	}
	if prefix > 0 && len(b) > prefix {
		b = b[:prefix]
	}
	if strings.EqualFold(col.DataType, "binary") {
		for len(b) > 0 && b[len(b)-1] == 0 { // BINARY(n) pads with 0x00
			b = b[:len(b)-1]
		}
	}
	return 'b', b
}

func isText(col *txn.ColumnDef) bool {
	cs, co := strings.ToLower(col.Charset), strings.ToLower(col.Collation)
	return (cs != "" || co != "") && cs != "binary" && co != "binary"
}

// unsignedMask makes a sign-extended and a zero-extended reading of an
// UNSIGNED column the same number.
func unsignedMask(v int64, col *txn.ColumnDef) int64 {
	if col == nil || !col.Unsigned {
		return v
	}
	switch strings.ToLower(col.DataType) {
	case "tinyint":
		return int64(uint8(v))
	case "smallint":
		return int64(uint16(v))
	case "mediumint":
		return v & 0xFFFFFF
	case "int", "integer":
		return int64(uint32(v))
	}
	return v
}

func floatBits(f float64) uint64 {
	switch {
	case f == 0:
		return 0 // -0.0 == 0.0
	case math.IsNaN(f):
		return math.Float64bits(math.NaN())
	}
	return math.Float64bits(f)
}

func u64bytes(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// normDecimal writes exact decimal text in one form per number: no leading
// '+' or integer zeros, no trailing fraction zeros, "0" for every zero.
func normDecimal(s string) string {
	s = strings.TrimSpace(s)
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	ip, fp, _ := strings.Cut(s, ".")
	ip = strings.TrimLeft(ip, "0")
	fp = strings.TrimRight(fp, "0")
	if ip == "" && fp == "" {
		return "0"
	}
	if ip == "" {
		ip = "0"
	}
	if fp != "" {
		ip += "." + fp
	}
	if neg {
		ip = "-" + ip
	}
	return ip
}

// normTemporal drops trailing fractional zeros ("10:00:00.000" = "10:00:00").
func normTemporal(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}
