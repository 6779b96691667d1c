package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prepl/prepl/compact"
	"github.com/prepl/prepl/internal/readahead"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// memTarget is an in-memory Target, as raft tests its node against a fake
// transport: a table store with row locks, a stored checkpoint per slot
// written in the same transaction as the rows, and a log of what
// committed. It checks every row change as the MySQL target does (an
// insert must find no row, an update or a delete the row of its before
// image), so a transaction applied out of its order, twice, or lost shows
// in the rows or in the log. A row lock another connection holds is
// waited for, and reported by LockWaits; a wait that closes a cycle fails
// as a deadlock, a long one as a lock wait timeout, and Kill interrupts
// it. A table's definition is there only once Load has read it. A hook
// sees every operation before it runs and can fail it (any class), stall
// it, or lose the connection, which makes the faults of a real server
// reproducible.
type memTarget struct {
	cat       memCatalog
	keepGTIDs bool
	// noLockWaits: LockWaits answers ErrNoLockWaits (MySQL 8).
	noLockWaits bool
	// retryFor bounds Retry (RetryLost's timeout).
	retryFor time.Duration
	// lockWaitTimeout ends a wait for a row lock (innodb_lock_wait_timeout).
	lockWaitTimeout time.Duration
	// hook, when set, runs before every operation, without the lock held:
	// it may block (a stall) and its error is the operation's.
	hook func(op *memOp) error

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a lock is released or a wait killed
	rows    map[string]map[string][]txn.Value
	ckpt    map[string]position.Checkpoint
	log     []memCommit
	nextID  uint64
	conns   map[uint64]*memConn
	locks   map[string]*memConn
	down    bool // every operation fails with a lost connection
	// Checks of the engine's rules, made as it goes.
	violations []string
	maxOpen    int // units sent and not yet committed or rolled back, at most
	maxBytes   int // and their source bytes, at most
	sends      int
	kills      int
	loaded     map[string]bool   // tables whose definition Load read
	lockPolls  int               // LockWaits answered
	resolved   map[string]string // the resolution ApplyDDL got, by DDL
}

// memOp is one operation the hook sees.
type memOp struct {
	Kind  string // conn, send, commit, rollback, ddl, load, checkpoints
	Conn  uint64
	Batch *memBatch           // send, commit
	Pos   position.Checkpoint // commit, ddl
	Txn   *txn.Txn            // ddl, load
}

// IDs names the transactions of a send ("" for other operations).
func (op *memOp) IDs() string {
	if op.Batch == nil {
		return ""
	}
	return op.Batch.ids()
}

// memCommit is one target commit: the source transactions it held, in the
// order they were sent.
type memCommit struct {
	Txns []*txn.Txn
	Pos  position.Checkpoint
	Conn uint64
	DDL  bool
}

type memErr struct {
	class Class
	msg   string
}

func (e memErr) Error() string { return e.msg }

var (
	errLost      = memErr{Connection, "connection lost"}
	errDeadlock  = memErr{Retry, "Deadlock found when trying to get lock"}
	errLockWait  = memErr{Retry, "Lock wait timeout exceeded"}
	errKilled    = memErr{Retry, "Query execution was interrupted"}
	errDuplicate = memErr{Refused, "Duplicate entry"}
	// errAckLost, from a commit hook: the commit happens, its answer is
	// lost with the connection.
	errAckLost = errors.New("commit done, answer lost")
)

func newMemTarget() *memTarget {
	return &memTarget{cat: testCatalog(), retryFor: 2 * time.Second, lockWaitTimeout: 5 * time.Second,
		changed: make(chan struct{}), rows: map[string]map[string][]txn.Value{}, ckpt: map[string]position.Checkpoint{},
		conns: map[uint64]*memConn{}, locks: map[string]*memConn{}, resolved: map[string]string{}, loaded: map[string]bool{}}
}

type memCatalog map[string]*txn.TableDef

func (c memCatalog) Table(schema, name string) (*txn.TableDef, bool) {
	d, ok := c[schema+"."+name]
	return d, ok
}

// testCatalog: tables a.t, b.t and s.t, each (id INT PRIMARY KEY, v INT).
func testCatalog() memCatalog {
	c := memCatalog{}
	for _, s := range []string{"a", "b", "s"} {
		c[s+".t"] = &txn.TableDef{Schema: s, Name: "t", Transactional: true,
			Columns: []txn.ColumnDef{{Name: "id", DataType: "int"}, {Name: "v", DataType: "int"}},
			Indexes: []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: []int{0}}}}
	}
	return c
}

func (t *memTarget) callHook(op *memOp) error {
	if t.hook == nil {
		return nil
	}
	return t.hook(op)
}

func (t *memTarget) violate(format string, args ...any) {
	t.violations = append(t.violations, fmt.Sprintf(format, args...))
}

// signal wakes the lock waiters; t.mu held.
func (t *memTarget) signal() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// setDown makes the target unreachable (true) or reachable again; every
// open connection is lost.
func (t *memTarget) setDown(down bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.down = down
	if down {
		for _, c := range t.conns {
			c.lose()
		}
	}
}

func (t *memTarget) Conn(ctx context.Context) (Conn, error) {
	if err := t.callHook(&memOp{Kind: "conn"}); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.down {
		return nil, errLost
	}
	t.nextID++
	c := &memConn{t: t, id: t.nextID, writes: map[string]memWrite{}}
	t.conns[c.id] = c
	return c, nil
}

func (t *memTarget) Tables() txn.Catalog { return loadedCatalog{t} }

// loadedCatalog is the target's catalog as the engine sees it: a table
// not loaded yet is a rule broken.
type loadedCatalog struct{ t *memTarget }

func (c loadedCatalog) Table(schema, name string) (*txn.TableDef, bool) {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if !c.t.loaded[schema+"."+name] {
		c.t.violate("definition of %s.%s read before Load", schema, name)
	}
	return c.t.cat.Table(schema, name)
}

func (t *memTarget) Load(ctx context.Context, tx *txn.Txn) error {
	if err := t.callHook(&memOp{Kind: "load", Txn: tx}); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.down {
		return errLost
	}
	for _, ch := range tx.Changes {
		if ch.Row != nil {
			t.loaded[ch.Row.Table.QualifiedName()] = true
		}
	}
	return nil
}

// memBatch is a rendered unit: its members, and whether compacted. A
// planned one (memPlanner) has its statements in steps.
type memBatch struct {
	txs     []*txn.Txn
	compact bool
	planned bool
	steps   []memStep
	saved   int
}

// memStep is one statement of a planned batch: a source row change, or a
// row of a table's net effect (its image; an update's net has no before
// image, only the row's final one).
type memStep struct {
	tx  *txn.Txn
	row *txn.RowChange
	net bool
}

// Saved: a compacted batch claims one saved row change per member after
// the first; a planned one, what its plan dropped.
func (b *memBatch) Saved() int {
	switch {
	case b.planned:
		return b.saved
	case b.compact:
		return len(b.txs) - 1
	}
	return 0
}

func (b *memBatch) RowEvents() int { return 0 }

func (b *memBatch) ids() string {
	ids := make([]string, len(b.txs))
	for i, tx := range b.txs {
		ids[i] = tx.ID()
	}
	return strings.Join(ids, ",")
}

func (b *memBatch) has(id string) bool {
	return slices.ContainsFunc(b.txs, func(tx *txn.Txn) bool { return tx.ID() == id })
}

func (b *memBatch) size() int {
	n := 0
	for _, tx := range b.txs {
		n += tx.Size
	}
	return n
}

func (t *memTarget) Render(ctx context.Context, txs []*txn.Txn, compaction bool) (Batch, error) {
	return &memBatch{txs: slices.Clone(txs), compact: compaction}, nil
}

func (t *memTarget) ApplyDDL(ctx context.Context, tx *txn.Txn, before, after position.Checkpoint, resolve string) (bool, error) {
	if err := t.callHook(&memOp{Kind: "ddl", Txn: tx, Pos: after}); err != nil {
		return false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.down {
		return false, errLost
	}
	for _, c := range t.conns {
		if c.open != nil {
			t.violate("DDL %s ran while %s was open on conn %d", tx.ID(), c.open.ids(), c.id)
		}
	}
	t.resolved[tx.ID()] = resolve
	t.ckpt[after.Slot] = after
	t.log = append(t.log, memCommit{Txns: []*txn.Txn{tx}, Pos: after, DDL: true})
	return true, nil
}

func (t *memTarget) Checkpoints(ctx context.Context) (map[string]position.Checkpoint, error) {
	if err := t.callHook(&memOp{Kind: "checkpoints"}); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.down {
		return nil, errLost
	}
	return maps.Clone(t.ckpt), nil
}

func (t *memTarget) Retry(ctx context.Context, what string, f func() error) error {
	return RetryLost(ctx, what, t, t.retryFor, nil, t.Classify, f)
}

func (t *memTarget) Classify(err error) Class {
	var me memErr
	if errors.As(err, &me) {
		return me.class
	}
	if errors.Is(err, ErrCompacted) {
		return Refused
	}
	return Fatal
}

func (t *memTarget) LockWaits(ctx context.Context) ([]ConnWait, error) {
	if t.noLockWaits {
		return nil, ErrNoLockWaits
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lockPolls++
	var ws []ConnWait
	for _, c := range t.conns {
		if c.waiting != "" {
			var blk uint64
			if h := t.locks[c.waiting]; h != nil {
				blk = h.id
			}
			ws = append(ws, ConnWait{Requester: c.id, Blocker: blk})
		}
	}
	return ws, nil
}

// Kill interrupts a statement waiting for a lock; a connection between
// statements forgets it, as MySQL's KILL QUERY does.
func (t *memTarget) Kill(ctx context.Context, id uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.kills++
	if c := t.conns[id]; c != nil && c.waiting != "" {
		c.killed = true
		t.signal()
	}
	return nil
}

func (t *memTarget) KeepsGTIDs() bool { return t.keepGTIDs }

func (t *memTarget) UnitLimits() (rows, bytes int) { return 0, 0 }

// MaybeApplied is "": memTarget's tables are all transactional.
func (t *memTarget) MaybeApplied(context.Context) (string, error) { return "", nil }

func (t *memTarget) String() string { return "memtarget" }

// committed lists the source transactions committed, in commit order.
func (t *memTarget) committed() []*txn.Txn {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*txn.Txn
	for _, c := range t.log {
		out = append(out, c.Txns...)
	}
	return out
}

func (t *memTarget) checkpoint(slot string) position.Checkpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ckpt[slot]
}

type memWrite struct {
	table, key string
	row        []txn.Value // nil: deleted
}

type memConn struct {
	t       *memTarget
	id      uint64
	dead    bool
	open    *memBatch // sent, not yet committed or rolled back
	writes  map[string]memWrite
	order   []string // keys of writes in the order written
	held    []string // row locks
	waiting string   // the row lock it waits for
	killed  bool
}

func (c *memConn) ID() uint64 { return c.id }

// lose drops the connection: its transaction rolls back; c.t.mu held.
func (c *memConn) lose() {
	c.dead = true
	c.release()
	delete(c.t.conns, c.id)
}

// release ends c's transaction; c.t.mu held.
func (c *memConn) release() {
	for _, k := range c.held {
		if c.t.locks[k] == c {
			delete(c.t.locks, k)
		}
	}
	c.held, c.open, c.writes, c.order = nil, nil, map[string]memWrite{}, nil
	c.t.signal()
}

// fault applies a hook's error: a lost connection drops c.
func (c *memConn) fault(err error) error {
	if c.t.Classify(err) == Connection {
		c.t.mu.Lock()
		c.lose()
		c.t.mu.Unlock()
	}
	return err
}

func rowKey(rc *txn.RowChange) string {
	img := rc.After
	if rc.Kind != txn.Insert {
		img = rc.Before
	}
	return fmt.Sprintf("%s/%v", rc.Table.QualifiedName(), img[0])
}

func (c *memConn) Send(ctx context.Context, b Batch) error {
	mb := b.(*memBatch)
	if err := c.t.callHook(&memOp{Kind: "send", Conn: c.id, Batch: mb}); err != nil {
		return c.fault(err)
	}
	t := c.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.dead {
		return errLost
	}
	if c.open != nil {
		t.violate("conn %d: send of %s with %s still open", c.id, mb.ids(), c.open.ids())
	}
	c.open = mb
	t.sends++
	open, bytes := 0, 0
	for _, o := range t.conns {
		if o.open != nil {
			open++
			bytes += o.open.size()
		}
	}
	t.maxOpen, t.maxBytes = max(t.maxOpen, open), max(t.maxBytes, bytes)
	if mb.planned {
		for _, st := range mb.steps {
			if err := c.apply(ctx, st.row, st.net); err != nil {
				if st.net {
					return fmt.Errorf("compacted %s: %v: %w", st.row.Kind, err, ErrCompacted)
				}
				return fmt.Errorf("apply %s: %w", st.tx.ID(), err)
			}
		}
		return nil
	}
	for _, tx := range mb.txs {
		for _, ch := range tx.Changes {
			if ch.Row == nil {
				continue
			}
			if err := c.apply(ctx, ch.Row, false); err != nil {
				return fmt.Errorf("apply %s: %w", tx.ID(), err)
			}
		}
	}
	return nil
}

// apply locks the row and checks the change against what c sees (a net
// update: that the row is there); t.mu held.
func (c *memConn) apply(ctx context.Context, rc *txn.RowChange, net bool) error {
	t := c.t
	var k string
	if net && rc.Kind == txn.Update {
		k = fmt.Sprintf("%s/%v", rc.Table.QualifiedName(), rc.After[0])
	} else {
		k = rowKey(rc)
	}
	if err := c.lock(ctx, k); err != nil {
		return err
	}
	cur, ok := c.writes[k]
	row := cur.row
	if !ok {
		row = t.rows[rc.Table.QualifiedName()][k]
	}
	switch rc.Kind {
	case txn.Insert:
		if row != nil {
			return errDuplicate
		}
		row = rc.After
	case txn.Update, txn.Delete:
		if row == nil || !(net && rc.Kind == txn.Update) && !slices.Equal(row, rc.Before) {
			return fmt.Errorf("%s of %s: found %v, want %v: %w", rc.Kind, k, row, rc.Before, ErrRowCount)
		}
		row = nil
		if rc.Kind == txn.Update {
			row = rc.After
		}
	}
	if !ok {
		c.order = append(c.order, k)
	}
	c.writes[k] = memWrite{table: rc.Table.QualifiedName(), key: k, row: row}
	return nil
}

// lock takes row lock k, waiting while another connection holds it;
// t.mu held (released while waiting).
func (c *memConn) lock(ctx context.Context, k string) error {
	t := c.t
	deadline := time.Now().Add(t.lockWaitTimeout)
	defer func() { c.waiting, c.killed = "", false }()
	for {
		if c.dead {
			return errLost
		}
		h := t.locks[k]
		if h == nil || h == c {
			if h == nil {
				t.locks[k] = c
				c.held = append(c.held, k)
			}
			return nil
		}
		if c.killed {
			return errKilled
		}
		// A cycle of waits is a deadlock: this statement is the victim.
		for w := h; w != nil; {
			if w.waiting == "" {
				break
			}
			w = t.locks[w.waiting]
			if w == c {
				return errDeadlock
			}
		}
		c.waiting = k
		ch := t.changed
		t.mu.Unlock()
		var err error
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			err = errLockWait
		case <-ctx.Done():
			err = ctx.Err()
		}
		t.mu.Lock()
		if err != nil {
			return err
		}
	}
}

func (c *memConn) Commit(ctx context.Context, p position.Checkpoint) error {
	c.t.mu.Lock()
	open := c.open
	c.t.mu.Unlock()
	herr := c.t.callHook(&memOp{Kind: "commit", Conn: c.id, Pos: p, Batch: open})
	if herr != nil && herr != errAckLost {
		return c.fault(herr)
	}
	t := c.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.dead {
		return errLost
	}
	if c.open == nil {
		t.violate("conn %d: commit with nothing sent", c.id)
		return errors.New("nothing to commit")
	}
	for _, k := range c.order {
		w := c.writes[k]
		if t.rows[w.table] == nil {
			t.rows[w.table] = map[string][]txn.Value{}
		}
		if w.row == nil {
			delete(t.rows[w.table], k)
		} else {
			t.rows[w.table][k] = w.row
		}
	}
	t.ckpt[p.Slot] = p
	t.log = append(t.log, memCommit{Txns: c.open.txs, Pos: p, Conn: c.id})
	c.release()
	if herr == errAckLost {
		c.lose()
		return errLost
	}
	return nil
}

func (c *memConn) Rollback(ctx context.Context) error {
	if err := c.t.callHook(&memOp{Kind: "rollback", Conn: c.id}); err != nil {
		return c.fault(err)
	}
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if c.dead {
		return errLost
	}
	c.release()
	return nil
}

func (c *memConn) Close() {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if !c.dead {
		c.lose()
	}
}

// A workload of row transactions on a few keys, each checked by the
// target against the rows before it: the state it leaves is known.

type workload struct {
	txs  []*txn.Txn
	want map[string]map[string][]txn.Value // the rows after all of txs
}

// wl makes n transactions of 1 to 3 row changes each on keys 0..keys-1
// of the tables of schemas, from seed; every before image is what the
// transactions before it left.
func wl(seed uint64, n, keys int, schemas ...string) *workload {
	if len(schemas) == 0 {
		schemas = []string{"s"}
	}
	r := rand.New(rand.NewPCG(seed, 1))
	w := &workload{want: map[string]map[string][]txn.Value{}}
	for i := 1; i <= n; i++ {
		schema := schemas[r.IntN(len(schemas))]
		tx := mkTxn(i, schema)
		touched := map[int]bool{}
		for range 1 + r.IntN(3) {
			k := r.IntN(keys)
			if touched[k] {
				continue
			}
			touched[k] = true
			tx.Changes = append(tx.Changes, w.change(schema, k, int64(i)))
		}
		w.txs = append(w.txs, tx)
	}
	return w
}

// change writes key k of schema.t: an insert when it has no row, else an
// update (or, one time in four, a delete).
func (w *workload) change(schema string, k int, v int64) txn.Change {
	tbl := schema + ".t"
	if w.want[tbl] == nil {
		w.want[tbl] = map[string][]txn.Value{}
	}
	key := fmt.Sprintf("%s/%v", tbl, int64(k))
	old := w.want[tbl][key]
	table := &txn.Table{Schema: schema, Name: "t"}
	after := []txn.Value{int64(k), v}
	switch {
	case old == nil:
		w.want[tbl][key] = after
		return txn.Change{Row: &txn.RowChange{Kind: txn.Insert, Table: table, After: after, AfterCols: []bool{true, true}}}
	case v%4 == 0:
		delete(w.want[tbl], key)
		return txn.Change{Row: &txn.RowChange{Kind: txn.Delete, Table: table, Before: old, BeforeCols: []bool{true, true}}}
	}
	w.want[tbl][key] = after
	return txn.Change{Row: &txn.RowChange{Kind: txn.Update, Table: table, Before: old, BeforeCols: []bool{true, true},
		After: after, AfterCols: []bool{true, true}}}
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// mkTxn is transaction n, GTID 0-1-n (domain 1 for schema b, so that
// mode domain has two), at binlog.000001:(n*100-96)..n*100, empty.
func mkTxn(n int, schema string) *txn.Txn {
	var domain uint32
	if schema == "b" {
		domain = 1
	}
	return &txn.Txn{Seq: uint64(n), GTID: fmt.Sprintf("%d-1-%d", domain, n), Domain: domain, ServerID: 1, SeqNo: uint64(n),
		Start: txn.Position{File: "binlog.000001", Offset: uint32(n*100 - 96)},
		End:   txn.Position{File: "binlog.000001", Offset: uint32(n * 100)},
		Size:  100, Timestamp: t0.Add(time.Duration(n) * time.Second), LastCommitted: -1, SequenceNumber: -1}
}

// ddlTxn is transaction n, a DDL.
func ddlTxn(n int) *txn.Txn {
	tx := mkTxn(n, "s")
	tx.Changes = []txn.Change{{Stmt: &txn.Statement{SQL: "ALTER TABLE t ADD c INT", Schema: "s", DDL: true}}}
	return tx
}

// sliceSource yields txs, then err (io.EOF by default); with live set it
// waits instead, as a live stream does, until the context ends.
type sliceSource struct {
	txs  []*txn.Txn
	err  error
	live bool

	mu   sync.Mutex
	read int
	// at, when set, is closed once the source has handed over everything.
	at chan struct{}
}

func (s *sliceSource) ReadAhead() *readahead.Reader { return nil }
func (s *sliceSource) AtHand() bool                 { return false }
func (s *sliceSource) Silence() time.Duration       { return 0 }

func (s *sliceSource) Next(ctx context.Context) (*txn.Txn, error) {
	s.mu.Lock()
	i := s.read
	if i < len(s.txs) {
		s.read++
	}
	s.mu.Unlock()
	if i < len(s.txs) {
		return s.txs[i], nil
	}
	if s.at != nil {
		select {
		case <-s.at:
		default:
			close(s.at)
		}
	}
	if s.live {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.err != nil {
		return nil, s.err
	}
	return nil, io.EOF
}

// checkRun checks what every run must leave: no rule broken on the way,
// each transaction committed at most once, in source order when the mode
// keeps one commit order (inOrder), the stored checkpoint at the last
// commit, and as many transactions counted as committed.
func checkRun(t *testing.T, tgt *memTarget, st Stats, inOrder bool) {
	t.Helper()
	checkCommits(t, tgt, inOrder, func(committed int) {
		if int(st.Txns) != committed {
			t.Errorf("Stats.Txns = %d, target committed %d", st.Txns, committed)
		}
	})
}

// checkFailedRun is checkRun for a run that failed with units in flight
// on several workers: a unit may have committed while the run was
// failing, before its worker could tell; nothing is counted that did not
// commit.
func checkFailedRun(t *testing.T, tgt *memTarget, st Stats, inOrder bool) {
	t.Helper()
	checkCommits(t, tgt, inOrder, func(committed int) {
		if int(st.Txns) > committed {
			t.Errorf("Stats.Txns = %d, target committed %d", st.Txns, committed)
		}
	})
}

func checkCommits(t *testing.T, tgt *memTarget, inOrder bool, count func(committed int)) {
	t.Helper()
	tgt.mu.Lock()
	defer tgt.mu.Unlock()
	for _, v := range tgt.violations {
		t.Errorf("rule broken: %s", v)
	}
	seen := map[string]bool{}
	var last *txn.Txn
	var lastCommit memCommit
	for _, c := range tgt.log {
		for _, tx := range c.Txns {
			if seen[tx.ID()] {
				t.Errorf("%s committed twice", tx.ID())
			}
			seen[tx.ID()] = true
			if inOrder && last != nil && tx.Seq <= last.Seq {
				t.Errorf("%s committed after %s", tx.ID(), last.ID())
			}
			last = tx
		}
		lastCommit = c
	}
	if inOrder && last != nil {
		p := tgt.ckpt[lastCommit.Pos.Slot]
		if p.LastGTID != last.GTID || p.Pos != last.End.Offset || p.Pos != lastCommit.Pos.Pos {
			t.Errorf("stored checkpoint %s at %d, want the last commit's %s at %d", p.LastGTID, p.Pos, last.GTID, last.End.Offset)
		}
	}
	count(len(seen))
}

// checkRows compares the target's rows with want.
func checkRows(t *testing.T, tgt *memTarget, want map[string]map[string][]txn.Value) {
	t.Helper()
	tgt.mu.Lock()
	defer tgt.mu.Unlock()
	for tbl, rows := range want {
		got := tgt.rows[tbl]
		for k, v := range rows {
			if !slices.Equal(got[k], v) {
				t.Errorf("%s: %v, want %v", k, got[k], v)
			}
		}
		for k, v := range got {
			if rows[k] == nil {
				t.Errorf("%s: %v, want no row", k, v)
			}
		}
	}
}

// memPlanner is memTarget as a Planner, as the MySQL target is: the
// engine plans compaction (package compact) and the target applies the
// plan, its net effects checked only by row key, so a target that
// diverged surprises a compacted statement (ErrCompacted).
type memPlanner struct{ *memTarget }

func (p memPlanner) Verbatim(ctx context.Context, tx *txn.Txn) (string, error) { return "", nil }

func (p memPlanner) Lookup(ctx context.Context) compact.Lookup {
	return func(schema, name string) (*txn.TableDef, error) {
		d, ok := p.cat.Table(schema, name)
		if !ok {
			return nil, fmt.Errorf("no table %s.%s", schema, name)
		}
		return d, nil
	}
}

func (p memPlanner) RenderPlan(ctx context.Context, txs []*txn.Txn, up compact.UnitPlan) (Batch, error) {
	b := &memBatch{txs: slices.Clone(txs), compact: up.Compaction, planned: true}
	for _, r := range up.Runs {
		if r.Plan == nil {
			for _, tx := range r.Txs {
				for _, ch := range tx.Changes {
					if ch.Row != nil {
						b.steps = append(b.steps, memStep{tx: tx, row: ch.Row})
					}
				}
			}
			continue
		}
		b.saved += r.Plan.Dropped
		for _, s := range r.Plan.Ordered {
			b.steps = append(b.steps, memStep{tx: s.Tx, row: s.Row})
		}
		for _, n := range r.Plan.Nets {
			for _, img := range n.Deletes {
				b.steps = append(b.steps, memStep{tx: r.Txs[0], net: true, row: &txn.RowChange{Kind: txn.Delete, Table: n.Map, Before: img}})
			}
			for _, img := range n.Updates {
				b.steps = append(b.steps, memStep{tx: r.Txs[0], net: true, row: &txn.RowChange{Kind: txn.Update, Table: n.Map, After: img}})
			}
			for _, img := range n.Inserts {
				b.steps = append(b.steps, memStep{tx: r.Txs[0], net: true, row: &txn.RowChange{Kind: txn.Insert, Table: n.Map, After: img}})
			}
		}
	}
	return b, nil
}
