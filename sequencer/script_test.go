package sequencer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

// The scripts in testdata/*.txt drive a sequencer with events and check
// the actions it asks for; each reads like the rule it shows. A line is a
// command; the lines after it that start with "> " are what it must print
// (nothing when there are none). Commands:
//
//	config workers=N mode=M unit=N window=BYTES retries=N [adapt] [visible]
//	read N [row=K] [schema=S] [ddl] [skip] [size=BYTES]   transaction N (GTID 0-1-N), a row of S.t with key K
//	end | stop                                             EndOfInput, Stop
//	tick MS [backlog]                                      the clock at MS ms (backlog: more is read)
//	ready                                                  the actions, Admit answered with Admitted
//	prepared N | committed N                               of the unit whose first member is N
//	failed N CLASS [yielded] [final]                       prints the error that stops the run, if any
//	lockwait WREQ WBLK                                     the unit on worker WREQ waits for WBLK's (-1: holder not named)
//	unseen                                                 LockWaitsUnseen
//	concurrency | yields                                   Concurrency(), Stats().Yields
//	limit N                                                the controller's limit is now N (as if it had chosen it)
//	lookups                                                table definitions read from the catalog since config (keys computed)
//	run MS [work=US] [commit=US] [cores=N] [contention=PCT%] [conflict-every=N] [wait-every=N] [hot] [total=N]
//	                                                       MS of a simulated target (workload_test.go): the limits chosen, what committed
//	                                                       (with total, the input ends after N transactions: when all had committed)
//	pos | deadline | done | stats
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScript(t, f) })
	}
}

type script struct {
	t *testing.T
	// pending were read while the sequencer wanted no input: fed as soon
	// as it does, as the runtime's reader channel does.
	pending []pendingRead
	ended   bool // EndOfInput once pending is fed
	s       *Sequencer
	cat     *countingCatalog
	base    time.Time
	now     time.Time
	// For "run": the last transaction number read, the units on the
	// simulated target's workers.
	next, ahead int
	onWorker    map[int]*simUnit
	failedOnce  map[uint64]bool
}

type pendingRead struct {
	t    *txn.Txn
	skip bool
}

func (sc *script) feed() {
	for len(sc.pending) > 0 && sc.s.WantsInput() {
		sc.s.Read(sc.pending[0].t, sc.pending[0].skip)
		sc.pending = sc.pending[1:]
	}
	if sc.ended && len(sc.pending) == 0 {
		sc.s.EndOfInput()
	}
}

func runScript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	sc := &script{t: t, base: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	sc.now = sc.base
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ">") {
			continue
		}
		var want []string
		for j := i + 1; j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), ">"); j++ {
			want = append(want, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[j]), ">")))
		}
		got := sc.do(line)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:%d: %s\ngot:\n  %s\nwant:\n  %s", file, i+1, line, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}

func (sc *script) do(line string) (out []string) {
	f := strings.Fields(line)
	args := map[string]string{}
	for _, a := range f[1:] {
		k, v, _ := strings.Cut(a, "=")
		args[k] = v
	}
	num := func(i int) int {
		n, err := strconv.Atoi(f[i])
		if err != nil {
			sc.t.Fatalf("%q: want a number at field %d", line, i)
		}
		return n
	}
	switch f[0] {
	case "config":
		sc.cat = &countingCatalog{c: scriptCatalog}
		cfg := Config{Catalog: sc.cat}
		cfg.Workers, _ = strconv.Atoi(args["workers"])
		cfg.Mode = depend.Mode(args["mode"])
		cfg.UnitTxns, _ = strconv.Atoi(args["unit"])
		cfg.WindowBytes, _ = strconv.Atoi(args["window"])
		cfg.UnitBytes, _ = strconv.Atoi(args["unitbytes"])
		cfg.UnitRows, _ = strconv.Atoi(args["unitrows"])
		cfg.Retries, _ = strconv.Atoi(args["retries"])
		_, cfg.Adapt = args["adapt"]
		_, cfg.WaitsVisible = args["visible"]
		s, err := New(cfg, Origin{})
		if err != nil {
			sc.t.Fatal(err)
		}
		sc.s, sc.pending, sc.ended, sc.now = s, nil, false, sc.base
		sc.next, sc.ahead, sc.onWorker, sc.failedOnce = 0, 0, nil, nil
		sc.s.Tick(sc.now, false)
	case "read":
		n := num(1)
		_, skip := args["skip"]
		_, ddl := args["ddl"]
		size := 100
		if v, ok := args["size"]; ok {
			size, _ = strconv.Atoi(v)
		}
		key, _ := strconv.Atoi(args["row"])
		sc.next = max(sc.next, n)
		sc.pending = append(sc.pending, pendingRead{scriptTxn(n, key, args["schema"], ddl, size), skip})
		sc.feed()
	case "end":
		sc.ended = true
		sc.feed()
	case "stop":
		sc.pending = nil
		sc.s.Stop()
	case "tick":
		sc.now = sc.base.Add(time.Duration(num(1)) * time.Millisecond)
		sc.s.Tick(sc.now, len(f) > 2 && f[2] == "backlog")
	case "ready":
		for {
			sc.feed()
			acts := sc.s.Ready()
			if len(acts) == 0 {
				break
			}
			for _, a := range acts {
				out = append(out, describeAction(a))
				if a.Kind == Admit {
					sc.s.Admitted(a.Unit.Seq())
				}
			}
		}
	case "prepared":
		sc.s.Prepared(uint64(num(1)))
	case "committed":
		sc.s.Committed(uint64(num(1)))
	case "failed":
		class := map[string]Class{"fatal": Fatal, "refused": Refused, "retry": Retry, "connection": Connection}[f[2]]
		_, y := args["yielded"]
		_, final := args["final"]
		if err := sc.s.Failed(uint64(num(1)), Failure{Class: class, Yielded: y, Final: final, Err: errors.New(f[2])}); err != nil {
			out = append(out, "error: "+err.Error())
		}
	case "lockwait":
		sc.s.LockWaits([]LockWait{{Requester: num(1), Blocker: num(2)}})
	case "pos":
		st := sc.s.Stats()
		out = append(out, fmt.Sprintf("last %s:%d gtid=%s floor=%s", st.Last.File, st.Last.Pos, st.Last.GTIDPos, sc.s.Floor().GTIDPos))
	case "deadline":
		d := sc.s.Deadline()
		if d.IsZero() {
			out = append(out, "none")
		} else {
			out = append(out, fmt.Sprintf("%dms", d.Sub(sc.base).Milliseconds()))
		}
	case "done":
		out = append(out, fmt.Sprint(sc.s.Done()))
	case "run":
		out = append(out, sc.run(time.Duration(num(1))*time.Millisecond, parseWorkload(args)))
	case "concurrency":
		out = append(out, fmt.Sprint(sc.s.Concurrency()))
	case "limit":
		sc.s.limit = num(1)
	case "lookups":
		out = append(out, fmt.Sprint(sc.cat.n))
	case "unseen":
		sc.s.LockWaitsUnseen()
	case "yields":
		out = append(out, fmt.Sprint(sc.s.Stats().Yields))
	case "stats":
		st := sc.s.Stats()
		out = append(out, fmt.Sprintf("txns=%d units=%d retries=%d errors=%v waits=%v", st.Txns, st.Units, st.Retries, st.Errors, st.Serialized))
	default:
		sc.t.Fatalf("unknown command %q", line)
	}
	return out
}

// describeAction prints an action by its unit's member numbers.
func describeAction(a Action) string {
	var ms []string
	for i, m := range a.Unit.Members {
		s := strconv.FormatUint(m.SeqNo, 10)
		if a.Unit.Skip[i] {
			s += "(skip)"
		}
		ms = append(ms, s)
	}
	s := a.Kind.String() + " " + strings.Join(ms, ",")
	if a.Worker >= 0 {
		s += fmt.Sprintf(" w%d", a.Worker)
	}
	if a.CommitNow {
		s += " commit-now"
	}
	if a.Kind == Commit || a.CommitNow {
		s += " floor=" + a.Pos.Floor.GTIDPos
	}
	return s
}

var scriptCatalog = func() mapCatalog {
	c := mapCatalog{}
	for _, s := range []string{"s", "s2"} {
		c[s+".t"] = &txn.TableDef{Schema: s, Name: "t", Transactional: true,
			Columns: []txn.ColumnDef{{Name: "id", DataType: "int"}, {Name: "v", DataType: "int"}},
			Indexes: []txn.IndexDef{{Name: "PRIMARY", Primary: true, Columns: []int{0}}}}
	}
	return c
}()

type mapCatalog map[string]*txn.TableDef

func (c mapCatalog) Table(schema, name string) (*txn.TableDef, bool) {
	d, ok := c[schema+"."+name]
	return d, ok
}

// countingCatalog counts the table definitions read from it: the keys
// the tracker computed.
type countingCatalog struct {
	c txn.Catalog
	n int
}

func (c *countingCatalog) Table(schema, name string) (*txn.TableDef, bool) {
	c.n++
	return c.c.Table(schema, name)
}

// scriptTxn is transaction n: GTID 0-1-n, ending at binlog.000001:n*100,
// an insert of row key into schema.t (s by default), or a DDL.
func scriptTxn(n, key int, schema string, ddl bool, size int) *txn.Txn {
	if schema == "" {
		schema = "s"
	}
	t := &txn.Txn{Seq: uint64(n), GTID: fmt.Sprintf("0-1-%d", n), Domain: 0, ServerID: 1, SeqNo: uint64(n),
		Start: txn.Position{File: "binlog.000001", Offset: uint32(n*100 - 100 + 4)},
		End:   txn.Position{File: "binlog.000001", Offset: uint32(n * 100)},
		Size:  size, LastCommitted: -1, SequenceNumber: -1}
	if ddl {
		t.Changes = []txn.Change{{Stmt: &txn.Statement{SQL: "ALTER TABLE t ADD c INT", Schema: schema, DDL: true}}}
		return t
	}
	vals := []txn.Value{int64(key), int64(n)}
	t.Changes = []txn.Change{{Row: &txn.RowChange{Kind: txn.Insert, Table: &txn.Table{Schema: schema, Name: "t"},
		After: vals, AfterCols: []bool{true, true}}}}
	return t
}
