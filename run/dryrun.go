package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/txn"
)

// DryRun makes Replay apply nothing: it reads the files as the replay
// would, runs the same filter, and writes to Out what would be applied
// (each transaction, then the GTID ranges, times and tables). No target
// is needed; with one, the dry run starts at its stored position, and no
// channel is claimed.
type DryRun struct {
	Out io.Writer
	// PrintSQL makes Out a script for the mariadb or mysql client: the
	// SQL a MySQL target would be sent for each transaction, rendered by
	// package mysql's applier as a commit unit of its own
	// (mysql.Script), the descriptions in comments. Table definitions
	// come from the target, else from the binlog's full row metadata.
	PrintSQL bool
}

// dryRun writes what applying rd would do (o.DryRun); tgt (nil without a
// MySQL target) only lends its table definitions.
func dryRun(ctx context.Context, o *DryRun, rd *fileset.Reader, filter func(*txn.Txn) apply.Action, tgt *mysql.Target,
	compaction bool, loc *time.Location) error {
	w := o.Out
	var script *mysql.Script
	var defs *offlineDefs
	if o.PrintSQL {
		// The description goes in SQL comments: the output is a script.
		w = &commentWriter{w: o.Out}
		if tgt == nil {
			tgt = mysql.NewOffline()
			defs = &offlineDefs{cat: tgt.Catalog}
		}
		var err error
		if script, err = tgt.NewScript(o.Out, compaction); err != nil {
			return err
		}
	}
	sum := dryRunSummary{tables: map[string]int{}, mysql: position.MySQLSet{}, mariadb: map[string][][2]uint64{}}
	var readErr error
	for {
		t, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		a := apply.Apply
		if filter != nil {
			a = filter(t)
		}
		id := t.GTID
		if id == "" {
			id = "(no GTID)"
		}
		at := t.Timestamp.In(loc).Format(TimeLayout)
		if a == apply.Stop {
			fmt.Fprintf(w, "stop   %s at %s %s: the selection ends before it\n", id, t.Start, at)
			break
		}
		if a == apply.Skip {
			sum.skipped++
			fmt.Fprintf(w, "skip   %s at %s %s\n", id, t.Start, at)
			continue
		}
		sum.add(t)
		fmt.Fprintf(w, "apply  %s at %s %s  %s\n", id, t.Start, at, describeChanges(t))
		if script != nil {
			if err := defs.put(t); err != nil {
				return err
			}
			if err := script.Txn(ctx, t); err != nil {
				return fmt.Errorf("--print-sql %s: %w", mysql.TxnID(t), err)
			}
		}
		if a == apply.Last {
			break
		}
	}
	sum.print(w)
	if readErr != nil {
		return fmt.Errorf("the dry run stops here, as the replay would: %w", readErr)
	}
	return nil
}

type dryRunSummary struct {
	txns, rows, ddl, skipped int
	tables                   map[string]int
	mysql                    position.MySQLSet
	mariadb                  map[string][][2]uint64 // "domain-server" -> seq ranges
	noGTID                   int
	first, last              time.Time
}

func (s *dryRunSummary) add(t *txn.Txn) {
	s.txns++
	s.rows += t.Rows()
	if t.IsDDL() {
		s.ddl++
	}
	for _, c := range t.Changes {
		if c.Row != nil {
			s.tables[c.Row.Table.QualifiedName()]++
		}
	}
	if s.first.IsZero() {
		s.first = t.Timestamp
	}
	s.last = t.Timestamp
	switch {
	case t.GTID == "":
		s.noGTID++
	case strings.Contains(t.GTID, ":"):
		i := strings.LastIndexByte(t.GTID, ':')
		s.mysql.Add(t.GTID[:i], t.SeqNo)
	default:
		i := strings.LastIndexByte(t.GTID, '-')
		k, seq := t.GTID[:i], t.SeqNo
		r := s.mariadb[k]
		if n := len(r); n > 0 && r[n-1][1]+1 == seq {
			r[n-1][1] = seq
		} else {
			r = append(r, [2]uint64{seq, seq})
		}
		s.mariadb[k] = r
	}
}

func (s *dryRunSummary) print(w io.Writer) {
	fmt.Fprintf(w, "would apply %d transactions (%d rows, %d DDL); skip %d\n", s.txns, s.rows, s.ddl, s.skipped)
	var ranges []string
	keys := make([]string, 0, len(s.mariadb))
	for k := range s.mariadb {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, r := range s.mariadb[k] {
			if r[0] == r[1] {
				ranges = append(ranges, fmt.Sprintf("%s-%d", k, r[0]))
			} else {
				ranges = append(ranges, fmt.Sprintf("%s-%d..%s-%d", k, r[0], k, r[1]))
			}
		}
	}
	if !s.mysql.Empty() {
		ranges = append(ranges, s.mysql.String())
	}
	if s.noGTID > 0 {
		ranges = append(ranges, fmt.Sprintf("%d without GTID", s.noGTID))
	}
	if len(ranges) > 0 {
		fmt.Fprintf(w, "GTIDs: %s\n", strings.Join(ranges, ", "))
	}
	if s.txns > 0 {
		fmt.Fprintf(w, "source time: %s .. %s\n", s.first.Local().Format(TimeLayout), s.last.Local().Format(TimeLayout))
	}
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		names[i] = fmt.Sprintf("%s (%d)", n, s.tables[n])
	}
	if len(names) > 0 {
		fmt.Fprintf(w, "tables (row changes): %s\n", strings.Join(names, ", "))
	}
}

// describeChanges is one line on what a transaction does.
func describeChanges(t *txn.Txn) string {
	if t.IsDDL() {
		return "DDL " + firstLine(t.Changes[0].Stmt.SQL)
	}
	type counts struct{ ins, upd, del int }
	per := map[string]*counts{}
	var order []string
	stmts := 0
	for _, c := range t.Changes {
		if c.Stmt != nil {
			stmts++
			continue
		}
		n := c.Row.Table.QualifiedName()
		k := per[n]
		if k == nil {
			k = &counts{}
			per[n] = k
			order = append(order, n)
		}
		switch c.Row.Kind {
		case txn.Insert:
			k.ins++
		case txn.Update:
			k.upd++
		case txn.Delete:
			k.del++
		}
	}
	var parts []string
	for _, n := range order {
		k := per[n]
		parts = append(parts, fmt.Sprintf("%s +%d ~%d -%d", n, k.ins, k.upd, k.del))
	}
	if stmts > 0 {
		parts = append(parts, fmt.Sprintf("%d statements", stmts))
	}
	if len(parts) == 0 {
		return "(nothing)"
	}
	return strings.Join(parts, "; ")
}

// firstLine is the start of a statement, for a line of the listing.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// offlineDefs gives the script of a dry run without a MySQL target the
// definition of each row's table, put in the catalog of the rendering
// target (mysql.NewOffline) before its transaction renders: the one its
// own table map gives (a table dropped and re-created with other columns
// has another), where the generated columns the stream's CREATE TABLE
// named are marked, so that the script leaves them out as the applier
// does. Those an ALTER adds stay unknown: the script gives their values,
// which the server refuses; give a target that has the table.
type offlineDefs struct {
	cat       *mysql.Catalog
	maps      map[string]mapDef          // by table (schema.table): the definition of its last table map
	generated map[string]map[string]bool // by table: its generated columns (lower case), from its CREATE TABLE
}

type mapDef struct {
	tb *txn.Table
	d  *txn.TableDef
}

// put puts the definitions of t's tables in the catalog (nothing when s
// is nil: the target has them).
func (s *offlineDefs) put(t *txn.Txn) error {
	if s == nil {
		return nil
	}
	if t.IsDDL() {
		s.ddl(t.Changes[0].Stmt)
	}
	for _, c := range t.Changes {
		if c.Row == nil {
			continue
		}
		tb := c.Row.Table
		d, err := s.def(tb)
		if err != nil {
			return fmt.Errorf("--print-sql %s at %s: %w; give --target with a server that has the table, "+
				"or replay binlogs written with binlog_row_metadata=FULL", mysql.TxnID(t), t.Start, err)
		}
		s.cat.Put(tb.Schema, tb.Name, d)
	}
	return nil
}

// ddl notes the generated columns of a CREATE TABLE.
func (s *offlineDefs) ddl(st *txn.Statement) {
	def, err := postgres.ParseCreateTable(st.SQL, st.Schema)
	if err != nil {
		return
	}
	g := map[string]bool{}
	for _, c := range def.Columns {
		if c.Generated != "" {
			g[strings.ToLower(c.Name)] = true
		}
	}
	if s.generated == nil {
		s.generated = map[string]map[string]bool{}
	}
	s.generated[def.Schema+"."+def.Name] = g
}

func (s *offlineDefs) def(tb *txn.Table) (*txn.TableDef, error) {
	name := tb.Schema + "." + tb.Name
	if m, ok := s.maps[name]; ok && m.tb == tb {
		return m.d, nil
	}
	d, err := binlog.TableDefFromMetadata(tb)
	if err != nil {
		return nil, err
	}
	for i := range d.Columns {
		g := s.generated[name][strings.ToLower(d.Columns[i].Name)]
		d.Columns[i].Generated = g
		// The server computes it: the applier writes the table in
		// the lax sql_mode (mysql.NeedsLax), as it would the target's.
		d.ComputedOnWrite = d.ComputedOnWrite || g
	}
	if s.maps == nil {
		s.maps = map[string]mapDef{}
	}
	s.maps[name] = mapDef{tb, d}
	return d, nil
}

// commentWriter prefixes each line with "-- ".
type commentWriter struct{ w io.Writer }

func (c *commentWriter) Write(p []byte) (int, error) {
	for _, l := range strings.SplitAfter(string(p), "\n") {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(c.w, "-- "+l); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
