package depend

import (
	"bytes"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/prepl/prepl/txn"
)

// The property: whatever order the tracker lets transactions execute in
// (any started transaction may execute and commit at any moment), every
// transaction finds the rows it expects (its before images, free unique
// values, existing parents) and the end state equals serial order's.

// Model tables: s1.a (id PK, u general_ci UNIQUE NULL, v), s1.b (id PK,
// x, y, UNIQUE(x,y) NULL), s2.n (no key), s3.p (id PK, v; parent of c),
// s3.c (id PK, pid FK -> p.id NULL), s4.c (id PK, pid FK -> s3.p.id NULL:
// a child in another schema).
func modelCatalog() catalog {
	c := catalog{}
	c.add(def("s1.a", []txn.ColumnDef{intCol("id"), textCol("u", "utf8mb4_general_ci"), intCol("v")}, pk(0), uk("u", 1)))
	c.add(def("s1.b", []txn.ColumnDef{intCol("id"), intCol("x"), intCol("y")}, pk(0), uk("xy", 1, 2)))
	c.add(def("s2.n", []txn.ColumnDef{intCol("a"), intCol("b")}))
	p := def("s3.p", []txn.ColumnDef{intCol("id"), intCol("v")}, pk(0))
	c.add(p)
	p.Referenced = true
	p.Cascades = []txn.CascadeRef{{Child: "s3.c", Name: "fk", Columns: []int{0}, OnDelete: true, OnUpdate: true}}
	ch := def("s3.c", []txn.ColumnDef{intCol("id"), intCol("pid")}, pk(0))
	ch.ForeignKeys = []txn.ForeignKeyDef{{Name: "fk", Columns: []int{1}, RefSchema: "s3", RefTable: "p", RefColumns: []string{"id"}}}
	c.add(ch)
	ch4 := def("s4.c", []txn.ColumnDef{intCol("id"), intCol("pid")}, pk(0))
	ch4.ForeignKeys = []txn.ForeignKeyDef{{Name: "fk", Columns: []int{1}, RefSchema: "s3", RefTable: "p", RefColumns: []string{"id"}}}
	c.add(ch4)
	return c
}

// op is one row change with full images, whatever the binlog carries.
type op struct {
	table         string
	kind          txn.Kind
	before, after []txn.Value
}

type state map[string][][]txn.Value

func (s state) clone() state {
	out := state{}
	for t, rows := range s {
		out[t] = slices.Clone(rows)
	}
	return out
}

func (s state) canon() string {
	var tabs []string
	for t, rows := range s {
		var rs []string
		for _, r := range rows {
			rs = append(rs, fmt.Sprintf("%q", fmt.Sprint(r)))
		}
		slices.Sort(rs)
		tabs = append(tabs, t+":"+strings.Join(rs, ","))
	}
	slices.Sort(tabs)
	return strings.Join(tabs, "\n")
}

func ciFold(v txn.Value) string { return strings.ToLower(strings.TrimRight(string(v.([]byte)), " ")) }

func keyed(table string) bool { return table != "s2.n" }

func (s state) find(table string, r []txn.Value) int {
	for i, x := range s[table] {
		if keyed(table) && reflect.DeepEqual(x[0], r[0]) || !keyed(table) && reflect.DeepEqual(x, r) {
			return i
		}
	}
	return -1
}

// apply executes one change as the target would, failing where the target
// would fail or where the row is not what the source saw.
func (s state) apply(o op) error {
	rows := s[o.table]
	if o.before != nil {
		i := s.find(o.table, o.before)
		if i < 0 || !reflect.DeepEqual(rows[i], o.before) {
			return fmt.Errorf("%s %v: row not as the source saw it", o.kind, o.before)
		}
		rows = slices.Delete(slices.Clone(rows), i, i+1)
	}
	if o.after != nil {
		if keyed(o.table) && slices.ContainsFunc(rows, func(x []txn.Value) bool { return reflect.DeepEqual(x[0], o.after[0]) }) {
			return fmt.Errorf("%s %v: duplicate primary key", o.kind, o.after)
		}
		rows = append(slices.Clone(rows), o.after)
	}
	s[o.table] = rows
	return s.check()
}

func (s state) check() error {
	seen := map[string]bool{}
	for _, r := range s["s1.a"] {
		if r[1] != nil {
			k := ciFold(r[1])
			if seen[k] {
				return fmt.Errorf("duplicate unique a.u %q", k)
			}
			seen[k] = true
		}
	}
	for _, r := range s["s1.b"] {
		if r[1] != nil && r[2] != nil {
			k := fmt.Sprint("xy", r[1], r[2])
			if seen[k] {
				return fmt.Errorf("duplicate unique b.xy %s", k)
			}
			seen[k] = true
		}
	}
	for _, child := range []string{"s3.c", "s4.c"} {
		for _, r := range s[child] {
			if r[1] != nil && s.find("s3.p", []txn.Value{r[1]}) < 0 {
				return fmt.Errorf("%s child %v without parent", child, r)
			}
		}
	}
	return nil
}

type workload struct {
	txs   []*txn.Txn
	ops   map[uint64][]op // by Seq
	final string
}

// gen produces n transactions valid in serial order. Each transaction
// belongs to one random group of tables, and its GTID domain is the group's
// number.
func gen(rng *rand.Rand, n int, groups ...[]string) workload {
	w := workload{ops: map[uint64][]op{}}
	st := state{}
	pool := []txn.Value{nil, str("a"), str("A"), str("a "), str("b"), str("B"), str("c")}
	small := []txn.Value{nil, int64(1), int64(2)}
	for seq := uint64(1); seq <= uint64(n); seq++ {
		tx := mk()
		tx.Seq = seq
		g := rng.Intn(len(groups))
		tables := groups[g]
		tx.Domain = uint32(g + 1)
		if rng.Intn(40) == 0 {
			tx.Changes = []txn.Change{ddl("s1", "ALTER TABLE a FORCE")}
			w.txs = append(w.txs, tx)
			continue
		}
		for k := 1 + rng.Intn(3); k > 0; k-- {
			table := tables[rng.Intn(len(tables))]
			o, ok := genOp(rng, st, table, pool, small)
			if !ok {
				continue
			}
			next := st.clone()
			if err := next.apply(o); err != nil {
				continue // not valid in serial order: drop it
			}
			st = next
			w.ops[seq] = append(w.ops[seq], o)
			tx.Changes = append(tx.Changes, toChange(rng, o))
		}
		w.txs = append(w.txs, tx)
	}
	w.final = st.canon()
	return w
}

// scatter puts each transaction in one of n GTID domains at random,
// whatever tables it touches: domains that share rows.
func scatter(rng *rand.Rand, w workload, n int) {
	for _, tx := range w.txs {
		tx.Domain = uint32(1 + rng.Intn(n))
	}
}

func genOp(rng *rand.Rand, st state, table string, pool, small []txn.Value) (op, bool) {
	rows := st[table]
	id := func() txn.Value { return int64(1 + rng.Intn(5)) }
	fresh := func(t string) txn.Value {
		for range 10 {
			v := id()
			if st.find(t, []txn.Value{v}) < 0 {
				return v
			}
		}
		return nil
	}
	mkRow := func(key txn.Value) []txn.Value {
		switch table {
		case "s1.a":
			return []txn.Value{key, pool[rng.Intn(len(pool))], int64(rng.Intn(3))}
		case "s1.b":
			return []txn.Value{key, small[rng.Intn(3)], small[rng.Intn(3)]}
		case "s2.n":
			return []txn.Value{int64(rng.Intn(2)), int64(rng.Intn(2))}
		case "s3.p":
			return []txn.Value{key, int64(rng.Intn(3))}
		case "s3.c", "s4.c":
			var pid txn.Value
			if ps := st["s3.p"]; len(ps) > 0 && rng.Intn(4) > 0 {
				pid = ps[rng.Intn(len(ps))][0]
			}
			return []txn.Value{key, pid}
		}
		panic(table)
	}
	kind := txn.Kind(1 + rng.Intn(3))
	if len(rows) == 0 {
		kind = txn.Insert
	}
	switch kind {
	case txn.Insert:
		key := fresh(table)
		if key == nil && keyed(table) {
			return op{}, false
		}
		return op{table: table, kind: kind, after: mkRow(key)}, true
	case txn.Delete:
		return op{table: table, kind: kind, before: rows[rng.Intn(len(rows))]}, true
	default:
		before := rows[rng.Intn(len(rows))]
		key := before[0]
		if rng.Intn(3) == 0 {
			if k := fresh(table); k != nil {
				key = k
			}
		}
		after := mkRow(key)
		if table == "s3.p" && rng.Intn(2) == 0 {
			after[0] = before[0]
		}
		return op{table: table, kind: kind, before: before, after: after}, true
	}
}

// toChange writes o as a binlog row change; sometimes with a MINIMAL before
// image (non-key columns absent), which the tracker must treat table-wide.
func toChange(rng *rand.Rand, o op) txn.Change {
	var c txn.Change
	switch o.kind {
	case txn.Insert:
		c = ins(o.table, slices.Clone(o.after)...)
	case txn.Delete:
		c = del(o.table, slices.Clone(o.before)...)
	default:
		c = upd(o.table, slices.Clone(o.before), slices.Clone(o.after))
	}
	if o.before != nil && keyed(o.table) && rng.Intn(8) == 0 {
		for i := 1; i < len(o.before); i++ {
			c = minimal(c, i)
		}
	}
	return c
}

// truthKeys names what a transaction touches, independently of Keys: the
// source's view of conflicts, used to write commit-order tags.
func truthKeys(ops []op, isDDL bool) map[string]bool {
	k := map[string]bool{}
	if isDDL {
		k["*"] = true
	}
	for _, o := range ops {
		for _, r := range [][]txn.Value{o.before, o.after} {
			if r == nil {
				continue
			}
			switch o.table {
			case "s1.a":
				if r[1] != nil {
					k["a.u:"+ciFold(r[1])] = true
				}
			case "s1.b":
				if r[1] != nil && r[2] != nil {
					k[fmt.Sprint("b.xy:", r[1], r[2])] = true
				}
			case "s2.n":
				k["n"] = true
				continue
			case "s3.c", "s4.c":
				if r[1] != nil {
					k[fmt.Sprint("s3.p:", r[1])] = true
				}
			}
			k[fmt.Sprint(o.table, ":", r[0])] = true
		}
	}
	return k
}

func overlaps(a, b map[string]bool) bool {
	if a["*"] || b["*"] {
		return true
	}
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

// tagMariaDB groups consecutive non-conflicting transactions under one
// commit id, as a source's group commit would.
func tagMariaDB(rng *rand.Rand, w workload) {
	var batch []map[string]bool
	cid := uint64(100)
	for _, tx := range w.txs {
		k := truthKeys(w.ops[tx.Seq], tx.IsDDL())
		conflict := slices.ContainsFunc(batch, func(b map[string]bool) bool { return overlaps(b, k) })
		if conflict || rng.Intn(4) == 0 {
			cid++
			batch = nil
		}
		batch = append(batch, k)
		tx.CommitID = cid
		tx.Flags = txn.FlagTransactional | txn.FlagAllowParallel | txn.FlagGroupCommitID
		if rng.Intn(10) == 0 && !conflict {
			tx.CommitID = 0 // not group committed
			batch = nil
		}
	}
}

// tagMySQL writes writeset-style logical clocks: last_committed is the
// newest conflicting sequence number of the same file (or later), and the
// clock restarts with each file.
func tagMySQL(rng *rand.Rand, w workload) {
	var sn int64
	file := 0
	var hist []map[string]bool
	left := 0
	for _, tx := range w.txs {
		if left == 0 {
			file++
			sn, hist, left = 0, nil, 3+rng.Intn(10)
		}
		left--
		sn++
		k := truthKeys(w.ops[tx.Seq], tx.IsDDL())
		var lc int64
		for i, h := range hist {
			if overlaps(h, k) {
				lc = int64(i + 1)
			}
		}
		if lc < sn-1 && rng.Intn(4) == 0 {
			lc += rng.Int63n(sn - lc) // commit-order clocks are at least as late
		}
		hist = append(hist, k)
		tx.LastCommitted, tx.SequenceNumber = lc, sn
		if rng.Intn(3) > 0 {
			tx.Start.File = fmt.Sprintf("binlog.%06d", file)
		}
	}
}

// simulate runs w through a tracker: any started transaction may execute
// and commit at any moment; a transaction executes atomically. Half of the
// runs also keep apply's commit order: a transaction commits only after
// every earlier one of its commit-order group (OrderKey, a slot), so a
// dependency across slots that the slots' order could never satisfy shows
// as "stuck".
func simulate(rng *rand.Rand, mode Mode, cat txn.Catalog, w workload) error {
	tr := New(mode, cat)
	st := state{}
	next := 0
	var running []uint64
	seen := map[uint64]bool{}
	inOrder := rng.Intn(2) == 0
	slots := map[string][]uint64{} // per OrderKey: added, not committed, in order
	keyOf := map[uint64]string{}
	for {
		k := rng.Intn(4)
		if len(running) == 0 && k == 0 {
			k = 1
		}
		for ; k > 0 && next < len(w.txs); k-- {
			tx := w.txs[next]
			tr.Add(tx)
			keyOf[tx.Seq] = OrderKey(mode, tx)
			slots[keyOf[tx.Seq]] = append(slots[keyOf[tx.Seq]], tx.Seq)
			next++
		}
		starts := tr.Ready()
		for i, s := range starts {
			if seen[s.Seq] {
				return fmt.Errorf("seq %d returned twice", s.Seq)
			}
			if i > 0 && s.Seq <= starts[i-1].Seq {
				return fmt.Errorf("Ready not in Seq order: %v", starts)
			}
			seen[s.Seq] = true
			running = append(running, s.Seq)
		}
		if mode == Serial && len(running) > 1 {
			return fmt.Errorf("serial: %v run together", running)
		}
		var can []int // indexes in running of what may commit now
		for i, seq := range running {
			if !inOrder || slots[keyOf[seq]][0] == seq {
				can = append(can, i)
			}
		}
		if len(can) == 0 {
			if next < len(w.txs) {
				continue
			}
			if tr.Pending() > 0 {
				return fmt.Errorf("stuck: %d pending, running %v, none may commit (in slot order: %v)", tr.Pending(), running, inOrder)
			}
			break
		}
		i := can[rng.Intn(len(can))]
		seq := running[i]
		running = slices.Delete(running, i, i+1)
		for _, o := range w.ops[seq] {
			if err := st.apply(o); err != nil {
				return fmt.Errorf("seq %d: %v", seq, err)
			}
		}
		tr.Done(seq)
		q := slots[keyOf[seq]]
		slots[keyOf[seq]] = slices.DeleteFunc(q, func(s uint64) bool { return s == seq })
	}
	if len(seen) != len(w.txs) {
		return fmt.Errorf("%d of %d transactions returned", len(seen), len(w.txs))
	}
	if got := st.canon(); got != w.final {
		return fmt.Errorf("final state differs:\n got %s\nwant %s", got, w.final)
	}
	return nil
}

func TestPropertyScheduleEqualsSerial(t *testing.T) {
	all := []string{"s1.a", "s1.b", "s2.n", "s3.p", "s3.c", "s4.c"}
	runs := []struct {
		name   string
		mode   Mode
		tables []string
		tag    func(*rand.Rand, workload)
	}{
		{"serial", Serial, all, nil},
		{"writeset", Writeset, all, nil},
		{"writeset-hot-unique", Writeset, []string{"s1.a", "s1.b"}, nil},
		{"domain", Domain, all, nil},
		{"domain-shared-rows", Domain, all, func(rng *rand.Rand, w workload) { scatter(rng, w, 3) }},
		{"domain-shared-hot-unique", Domain, []string{"s1.a", "s1.b"}, func(rng *rand.Rand, w workload) { scatter(rng, w, 2) }},
		{"schema", Schema, all, nil},
		{"commit-order-mariadb", CommitOrder, all, tagMariaDB},
		{"commit-order-mysql", CommitOrder, all, tagMySQL},
	}
	n := 2000
	if testing.Short() {
		n = 200
	}
	cat := modelCatalog()
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			parallel := 0
			for i := range n {
				seed := int64(i)
				rng := rand.New(rand.NewSource(seed))
				w := gen(rng, 5+rng.Intn(40), r.tables)
				if r.tag != nil {
					r.tag(rng, w)
				}
				if err := simulate(rng, r.mode, cat, w); err != nil {
					t.Fatalf("seed %d: %v\n%s", seed, err, dump(w))
				}
				parallel += maxParallel(r.mode, cat, w)
			}
			// Guard against a tracker that passes by serializing everything.
			if r.mode != Serial && parallel <= n {
				t.Fatalf("no parallelism found: %d", parallel)
			}
		})
	}
}

// TestPropertyDomains: two domains on disjoint tables need no order
// between them.
func TestPropertyDomains(t *testing.T) {
	cat := modelCatalog()
	for i := range 1000 {
		rng := rand.New(rand.NewSource(int64(i)))
		w := gen(rng, 5+rng.Intn(40), []string{"s1.a", "s1.b"}, []string{"s2.n", "s3.p", "s3.c"})
		if err := simulate(rng, Domain, cat, w); err != nil {
			t.Fatalf("seed %d: %v\n%s", i, err, dump(w))
		}
	}
}

// maxParallel is how many transactions start in the first Ready of a fresh
// tracker given the whole workload.
func maxParallel(mode Mode, cat txn.Catalog, w workload) int {
	tr := New(mode, cat)
	for _, tx := range w.txs {
		tr.Add(tx)
	}
	return len(tr.Ready())
}

func dump(w workload) string {
	var b bytes.Buffer
	for _, tx := range w.txs {
		fmt.Fprintf(&b, "%d cid=%d lc=%d sn=%d file=%q dom=%d ddl=%v:", tx.Seq, tx.CommitID, tx.LastCommitted, tx.SequenceNumber, tx.Start.File, tx.Domain, tx.IsDDL())
		for _, o := range w.ops[tx.Seq] {
			fmt.Fprintf(&b, " %s %s %v->%v;", o.kind, o.table, o.before, o.after)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestPropertyWouldWait: what WouldWait answers before a transaction is
// added is what Add then does, with commits in stream order as mode
// writeset makes them: 0 when it may start at once; else a transaction
// still pending, and it may start exactly when that one is Done.
func TestPropertyWouldWait(t *testing.T) {
	cat := modelCatalog()
	tables := []string{"s1.a", "s1.b", "s2.n", "s3.p", "s3.c", "s4.c"}
	waited := 0
	for i := range 500 {
		rng := rand.New(rand.NewSource(int64(i)))
		w := gen(rng, 5+rng.Intn(40), tables)
		tr := New(Writeset, cat)
		var order []uint64              // added, not Done, in Seq order
		started := map[uint64]bool{}    // returned by Ready
		waitsFor := map[uint64]uint64{} // what WouldWait said, for those not started
		ready := func() {
			for _, s := range tr.Ready() {
				started[s.Seq] = true
				if on, ok := waitsFor[s.Seq]; ok && tr.IsPending(on) {
					t.Fatalf("seed %d: seq %d started while %d it would wait for is pending", i, s.Seq, on)
				}
				delete(waitsFor, s.Seq)
			}
		}
		done := func() {
			seq := order[0]
			order = order[1:]
			tr.Done(seq)
			ready()
			for s, on := range waitsFor {
				if on == seq {
					t.Fatalf("seed %d: seq %d did not start when %d it would wait for was Done", i, s, on)
				}
			}
		}
		for _, tx := range w.txs {
			for len(order) > 0 && started[order[0]] && rng.Intn(3) == 0 {
				done()
			}
			on := tr.WouldWait(tx)
			if on != 0 && (on >= tx.Seq || !tr.IsPending(on)) {
				t.Fatalf("seed %d: WouldWait(seq %d) = %d, not an earlier pending one", i, tx.Seq, on)
			}
			tr.Add(tx)
			order = append(order, tx.Seq)
			if on != 0 {
				waitsFor[tx.Seq] = on
				waited++
			}
			ready()
			if on == 0 && !started[tx.Seq] {
				t.Fatalf("seed %d: WouldWait(seq %d) = 0 but it may not start", i, tx.Seq)
			}
		}
		for len(order) > 0 {
			if !started[order[0]] {
				t.Fatalf("seed %d: seq %d never started", i, order[0])
			}
			done()
		}
	}
	if waited == 0 {
		t.Fatal("no transaction would wait: the workloads test nothing")
	}
}
