package main

import (
	"bytes"
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

// dryRunReplay reads the files as replay would, runs the same filter, and
// prints what would be applied; with printSQL the SQL too. It applies
// nothing; tgt (may be nil) only lends its table definitions.
func dryRunReplay(ctx context.Context, rd *fileset.Reader, filter func(*txn.Txn) apply.Action, tgt *mysql.Target,
	printSQL bool, loc *time.Location, w io.Writer) error {
	script := w // the SQL of --print-sql
	if printSQL {
		// The description goes in SQL comments: the output is a script.
		w = &commentWriter{w: w}
		fmt.Fprintf(script, "%s;\n", scriptSession(tgt))
	}
	var sum dryRunSummary
	sum.tables = map[string]int{}
	sum.mysql = position.MySQLSet{}
	sum.mariadb = map[string][][2]uint64{}
	defs := &scriptDefs{tgt: tgt}
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
		if a == apply.Stop {
			fmt.Fprintf(w, "stop   %s at %s %s: the selection ends before it\n", id, t.Start, t.Timestamp.In(loc).Format(timeLayout))
			break
		}
		if a == apply.Skip {
			sum.skipped++
			fmt.Fprintf(w, "skip   %s at %s %s\n", id, t.Start, t.Timestamp.In(loc).Format(timeLayout))
			continue
		}
		sum.add(t)
		fmt.Fprintf(w, "apply  %s at %s %s  %s\n", id, t.Start, t.Timestamp.In(loc).Format(timeLayout), describeChanges(t))
		if printSQL {
			var b bytes.Buffer
			if err := printTxnSQL(ctx, &b, t, tgt, defs); err != nil {
				return err
			}
			script.Write(b.Bytes())
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

// timeLayout shows a time with its zone, as logs and status do.
const timeLayout = "2006-01-02 15:04:05 -07:00 MST"

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
		fmt.Fprintf(w, "source time: %s .. %s\n", s.first.Local().Format(timeLayout), s.last.Local().Format(timeLayout))
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

// printTxnSQL writes one transaction as the SQL prepl sends for it.
func printTxnSQL(ctx context.Context, w io.Writer, t *txn.Txn, tgt *mysql.Target, defs *scriptDefs) error {
	if err := defs.fit(ctx, t); err != nil {
		return err
	}
	if t.IsDDL() {
		st := t.Changes[0].Stmt
		defs.ddl(st)
		mariadb := t.Format != nil && t.Format.Flavor == txn.MariaDB
		var charsets map[uint16]string
		if tgt != nil {
			mariadb, charsets = tgt.IsMariaDB, tgt.Charsets
		}
		fmt.Fprintf(w, "%s;\n", mysql.DDLSession(st, mariadb, charsets))
		defer fmt.Fprintf(w, "%s;\n%s;\n", mysql.DDLSessionReset, scriptSession(tgt))
		// The applier ignores a USE of a database that does not exist yet
		// (the server logs CREATE DATABASE d with d as its database); a
		// script cannot, so it has none there.
		f := strings.Fields(strings.ToUpper(st.SQL))
		createDB := len(f) > 1 && f[0] == "CREATE" && (f[1] == "DATABASE" || f[1] == "SCHEMA")
		if st.Schema != "" && !createDB {
			fmt.Fprintf(w, "USE %s;\n", mysql.QuoteIdent(st.Schema))
		}
		fmt.Fprintf(w, "%s;\n", st.SQL)
		for _, c := range t.Changes[1:] { // rows of a CREATE TABLE ... SELECT
			if err := printRow(ctx, w, t, c, tgt, defs); err != nil {
				return err
			}
		}
		return nil
	}
	if tgt != nil {
		if err := tgt.Catalog.Redecode(ctx, t); err != nil {
			return fmt.Errorf("--print-sql %s: %w", mysql.TxnID(t), err)
		}
	}
	fmt.Fprintln(w, "BEGIN;")
	for _, c := range t.Changes {
		if c.Stmt != nil {
			fmt.Fprintf(w, "%s;\n", c.Stmt.SQL)
			continue
		}
		if err := printRow(ctx, w, t, c, tgt, defs); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "COMMIT;")
	return nil
}

func printRow(ctx context.Context, w io.Writer, t *txn.Txn, c txn.Change, tgt *mysql.Target, defs *scriptDefs) error {
	if c.Row == nil {
		return nil
	}
	d, err := defs.def(ctx, t, c.Row)
	if err != nil {
		return err
	}
	b, err := mysql.AppendRowChange(nil, c.Row, d)
	if err != nil {
		return fmt.Errorf("--print-sql %s: %w", mysql.TxnID(t), err)
	}
	if tgt != nil && mysql.NeedsLax(c.Row, d) {
		_, err = fmt.Fprintf(w, "%s;\n%s;\n%s;\n", mysql.SQLMode(true), b, mysql.SQLMode(false))
		return err
	}
	_, err = fmt.Fprintf(w, "%s;\n", b)
	return err
}

// scriptDefs gives --print-sql the definition of each row's table: the
// target's, with the rows fitted to it as the applier fits them; without
// a target, the definition the row's own table map gives (a table dropped
// and re-created with other columns has another), where the generated
// columns the stream's CREATE TABLE named are marked, so that the script
// leaves them out as the applier does.
type scriptDefs struct {
	tgt *mysql.Target
	// known are definitions given beforehand, by table (schema.table):
	// a catalog server's, for a binlog without full row metadata
	// (analyze --calibrate's pipeline).
	known     map[string]*txn.TableDef
	maps      map[string]mapDef          // by table: the definition of its last table map
	generated map[string]map[string]bool // by table: its generated columns (lower case), from its CREATE TABLE
}

type mapDef struct {
	tb *txn.Table
	d  *txn.TableDef
}

// fit loads the target's definitions of t's tables and fits t's row
// images to them (mysql.Catalog.LoadTxn).
func (s *scriptDefs) fit(ctx context.Context, t *txn.Txn) error {
	if s.tgt == nil {
		return nil
	}
	if err := s.tgt.Catalog.LoadTxn(ctx, t); err != nil {
		return fmt.Errorf("--print-sql %s: %w", mysql.TxnID(t), err)
	}
	return nil
}

// ddl notes the generated columns of a CREATE TABLE. Those an ALTER
// adds stay unknown: the script gives their values, which the lax
// session it runs in ignores.
func (s *scriptDefs) ddl(st *txn.Statement) {
	if s.tgt != nil {
		return
	}
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

func (s *scriptDefs) def(ctx context.Context, t *txn.Txn, rc *txn.RowChange) (*txn.TableDef, error) {
	tb := rc.Table
	if s.tgt != nil {
		d, err := s.tgt.Catalog.Load(ctx, tb.Schema, tb.Name)
		if err != nil {
			return nil, fmt.Errorf("--print-sql %s: %w", mysql.TxnID(t), err)
		}
		return d, nil
	}
	name := tb.Schema + "." + tb.Name
	if d := s.known[name]; d != nil {
		return d, nil
	}
	if m, ok := s.maps[name]; ok && m.tb == tb {
		return m.d, nil
	}
	d, err := binlog.TableDefFromMetadata(tb)
	if err != nil {
		return nil, fmt.Errorf("--print-sql %s at %s: %w; give --target with a server that has the table, "+
			"or replay binlogs written with binlog_row_metadata=FULL", mysql.TxnID(t), t.Start, err)
	}
	for i := range d.Columns {
		d.Columns[i].Generated = s.generated[name][strings.ToLower(d.Columns[i].Name)]
	}
	if s.maps == nil {
		s.maps = map[string]mapDef{}
	}
	s.maps[name] = mapDef{tb, d}
	return d, nil
}

// scriptSession is the session a --print-sql script applies rows in:
// prepl's (mysql.RowSession, strict), or without a target the lax
// sql_mode, since the definitions from row metadata do not say which
// columns are generated: the script gives their values, which the server
// ignores only in lax mode.
func scriptSession(tgt *mysql.Target) string {
	if tgt == nil {
		return mysql.RowSession + ";\n" + mysql.SQLMode(true)
	}
	return mysql.RowSession
}

// commentWriter prefixes each line with "-- ".
type commentWriter struct{ w io.Writer }

func (c *commentWriter) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(c.w, "-- "+l); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
