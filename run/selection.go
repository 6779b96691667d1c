package run

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// SelectSpec is replay's selection as given: mysqlbinlog's options, with
// the same names and meanings, plus prepl's GTID ones. They choose
// transactions within the file set; they never change what the continuity
// check sees.
type SelectSpec struct {
	StartGTID, StopGTID         string
	StartDatetime, StopDatetime string
	Timezone                    string
	StartPosition, StopPosition string
	Database                    string
	IncludeGTIDs, ExcludeGTIDs  string
	SkipGTID, SkipPosition      []string
}

// gtidMatch is a set of GTIDs of either flavor.
type gtidMatch struct {
	text    string // as given
	mysql   position.MySQLSet
	mariadb map[[2]uint64][][2]uint64 // domain, server -> seq ranges
}

func parseGTIDMatch(flagName, s string) (*gtidMatch, error) {
	m := &gtidMatch{text: s, mysql: position.MySQLSet{}, mariadb: map[[2]uint64][][2]uint64{}}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if strings.Contains(part, ":") {
			set, err := position.ParseMySQLSet(part)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrUsage, flagName, err)
			}
			m.mysql = m.mysql.Union(set)
			continue
		}
		f := strings.Split(part, "-")
		var n [4]uint64
		var err error
		for i := range f {
			if i < 4 {
				n[i], err = strconv.ParseUint(f[i], 10, 64)
			}
			if err != nil {
				break
			}
		}
		if err != nil || len(f) < 3 || len(f) > 4 || len(f) == 4 && n[3] < n[2] {
			return nil, fmt.Errorf("%w: %s: %q is neither a MySQL GTID set (uuid:1-5) nor a MariaDB GTID (0-1-5) or range (0-1-5-9)",
				ErrUsage, flagName, part)
		}
		hi := n[2]
		if len(f) == 4 {
			hi = n[3]
		}
		k := [2]uint64{n[0], n[1]}
		m.mariadb[k] = append(m.mariadb[k], [2]uint64{n[2], hi})
	}
	return m, nil
}

func (m *gtidMatch) contains(t *txn.Txn) bool { return m.has(t.GTID) }

// has: gtid, in the text form of txn.Txn.GTID, is in the set.
func (m *gtidMatch) has(gtid string) bool {
	if gtid == "" {
		return false
	}
	if i := strings.LastIndexByte(gtid, ':'); i >= 0 {
		gno, err := strconv.ParseUint(gtid[i+1:], 10, 64)
		return err == nil && m.mysql.Has(gtid[:i], gno)
	}
	g, err := position.ParseMariaGTID(gtid)
	if err != nil {
		return false
	}
	for _, r := range m.mariadb[[2]uint64{uint64(g.Domain), uint64(g.Server)}] {
		if g.Seq >= r[0] && g.Seq <= r[1] {
			return true
		}
	}
	return false
}

// parseDatetime reads a mysqlbinlog datetime: in loc unless it carries a
// zone. Fractions of a second are allowed.
func parseDatetime(flagName, v string, loc *time.Location) (time.Time, error) {
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999 Z07:00",
		"2006-01-02 15:04:05.999999999 MST"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: %s %q: want \"2006-01-02 15:04:05\" (in %s, --timezone changes it) or with a zone "+
		"(\"2006-01-02 15:04:05+01:00\", RFC 3339)", ErrUsage, flagName, v, loc)
}

// parseTimezone reads --timezone: "" is the local zone.
func parseTimezone(s string) (*time.Location, error) {
	switch strings.ToUpper(s) {
	case "", "SYSTEM", "LOCAL":
		return time.Local, nil
	case "UTC", "Z":
		return time.UTC, nil
	}
	if t, err := time.Parse("-07:00", s); err == nil {
		_, off := t.Zone()
		return time.FixedZone(s, off), nil
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		return nil, fmt.Errorf("%w: --timezone %q: want an IANA name (Europe/Paris), UTC or an offset (+01:00)", ErrUsage, s)
	}
	return loc, nil
}

func parseOffset(flagName, v string) (uint32, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q: want a byte offset in the file (the \"# at N\" mysqlbinlog prints)", ErrUsage, flagName, v)
	}
	return uint32(n), nil
}

// Selection is a parsed SelectSpec; filter applies it to a transaction.
type Selection struct {
	spec                SelectSpec
	startPos            *position.Set
	until               func(*txn.Txn) apply.Action
	startTime, stopAt   time.Time
	loc                 *time.Location
	firstFile, lastFile string
	startOff, stopOff   uint32
	database            string
	include, exclude    *gtidMatch
	skipGTID            map[string]bool
	skipPos             map[txn.Position]bool
	// startInside is set, and the run stopped before applying anything,
	// when --start-position falls inside a transaction of the first file.
	startInside error
	// stopNamed names the stop bounds given ("" without one); watch
	// notes whether one ended the selection.
	stopNamed string
	watch     stopWatch
}

// stopWatch notes a filter's verdicts, for what to say after a run:
// whether it was asked about a transaction at all (a rerun after a
// complete one asks about none: they were applied), and whether a stop
// (Stop or Last) ended the input.
type stopWatch struct{ asked, stopped bool }

// note records verdict a and returns it.
func (w *stopWatch) note(a apply.Action) apply.Action {
	w.asked = true
	if a == apply.Stop || a == apply.Last {
		w.stopped = true
	}
	return a
}

// unreached: the filter was asked, and no stop ended the input.
func (w *stopWatch) unreached() bool { return w.asked && !w.stopped }

// ParseSelection checks spec against the files given and makes the
// selection.
func ParseSelection(s SelectSpec, files []string) (*Selection, error) {
	sel := &Selection{spec: s, skipGTID: map[string]bool{}, skipPos: map[txn.Position]bool{}, database: s.Database}
	var err error
	if sel.loc, err = parseTimezone(s.Timezone); err != nil {
		return nil, err
	}
	if s.StartGTID != "" {
		if sel.startPos, err = position.ParseSet(s.StartGTID); err != nil {
			return nil, fmt.Errorf("%w: --start-gtid: %v", ErrUsage, err)
		}
	}
	if s.StopGTID != "" {
		sel.until = untilFilter(s.StopGTID)
	}
	if s.StartDatetime != "" {
		if sel.startTime, err = parseDatetime("--start-datetime", s.StartDatetime, sel.loc); err != nil {
			return nil, err
		}
	}
	if s.StopDatetime != "" {
		if sel.stopAt, err = parseDatetime("--stop-datetime", s.StopDatetime, sel.loc); err != nil {
			return nil, err
		}
	}
	if len(files) > 0 {
		sel.firstFile, sel.lastFile = filepath.Base(files[0]), filepath.Base(files[len(files)-1])
	}
	var stops []string
	for _, b := range []struct{ name, v string }{{"--stop-gtid", s.StopGTID}, {"--stop-datetime", s.StopDatetime}, {"--stop-position", s.StopPosition}} {
		if b.v != "" {
			stops = append(stops, b.name+" "+b.v)
		}
	}
	sel.stopNamed = strings.Join(stops, ", ")
	if s.StartPosition != "" {
		if sel.startOff, err = parseOffset("--start-position", s.StartPosition); err != nil {
			return nil, err
		}
	}
	if s.StopPosition != "" {
		if sel.stopOff, err = parseOffset("--stop-position", s.StopPosition); err != nil {
			return nil, err
		}
	}
	// Bounds that select nothing are a mistake (two values swapped, a
	// digit dropped): mariadb-binlog prints nothing and exits 0, and a
	// replay that "succeeded" applying nothing reads as a recovery done.
	if !sel.startTime.IsZero() && !sel.stopAt.IsZero() && !sel.startTime.Before(sel.stopAt) {
		return nil, fmt.Errorf("%w: --start-datetime %s is not before --stop-datetime %s: nothing would be selected",
			ErrUsage, s.StartDatetime, s.StopDatetime)
	}
	if sel.startOff > 0 && sel.stopOff > 0 && len(files) == 1 && sel.startOff >= sel.stopOff {
		return nil, fmt.Errorf("%w: --start-position %d is not before --stop-position %d in the one file given: nothing would be selected",
			ErrUsage, sel.startOff, sel.stopOff)
	}
	if s.IncludeGTIDs != "" {
		if sel.include, err = parseGTIDMatch("--include-gtids", s.IncludeGTIDs); err != nil {
			return nil, err
		}
	}
	if s.ExcludeGTIDs != "" {
		if sel.exclude, err = parseGTIDMatch("--exclude-gtids", s.ExcludeGTIDs); err != nil {
			return nil, err
		}
	}
	for _, g := range s.SkipGTID {
		// A MySQL UUID (and tag) as the binlog's GTIDs are written: in
		// lower case; a MariaDB GTID has no letters.
		sel.skipGTID[strings.ToLower(strings.TrimSpace(g))] = true
	}
	for _, p := range s.SkipPosition {
		f, o, ok := strings.Cut(p, ":")
		off, err := strconv.ParseUint(o, 10, 32)
		if !ok || f == "" || err != nil {
			return nil, fmt.Errorf("%w: --skip-position %q: want FILE:OFFSET (e.g. binlog.000042:1234)", ErrUsage, p)
		}
		sel.skipPos[txn.Position{File: filepath.Base(f), Offset: uint32(off)}] = true
	}
	return sel, nil
}

// inFiles is what the continuity scan found of the GTIDs the selection
// names: the --skip-gtid values, and whether --include-gtids and
// --exclude-gtids match any GTID of the files.
type inFiles struct {
	skip             map[string]bool
	include, exclude bool
}

// scanGTIDs returns what the continuity scan calls with each GTID
// (fileset.ScanFileFor), noting in the inFiles returned what the selection
// names; nil when it names no GTID, so that none is formatted.
func (sel *Selection) scanGTIDs() (func(string), *inFiles) {
	in := &inFiles{skip: map[string]bool{}}
	if len(sel.skipGTID) == 0 && sel.include == nil && sel.exclude == nil {
		return nil, in
	}
	return func(g string) {
		if sel.skipGTID[g] {
			in.skip[g] = true
		}
		in.include = in.include || sel.include != nil && sel.include.has(g)
		in.exclude = in.exclude || sel.exclude != nil && sel.exclude.has(g)
	}, in
}

// checkFiles refuses, before anything is applied, a selection that names
// what the files do not hold: a mistyped GTID (a digit, the server id,
// the UUID) or offset selects or leaves out nothing, and the transaction
// a point-in-time recovery was to leave out, a bad DELETE say, is applied
// with exit 0. A file the scan could not read to its end leaves the check
// out: what follows the damage is unknown, and the replay stops there
// anyway.
func (sel *Selection) checkFiles(sums []fileset.FileSummary, in *inFiles) error {
	for _, s := range sums {
		if s.Damaged != nil {
			return nil
		}
	}
	var missing []string
	for g := range sel.skipGTID {
		if !in.skip[g] {
			missing = append(missing, g)
		}
	}
	const list = "check it (prepl replay --dry-run FILE... lists the transactions)"
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("%w: --skip-gtid %s: not in the files given, so it would leave nothing out and the transaction it "+
			"was meant to leave out would be applied; %s", ErrUsage, strings.Join(missing, ", "), list)
	}
	if sel.include != nil && !in.include {
		return fmt.Errorf("%w: --include-gtids %s: none of its GTIDs is in the files given, so nothing would be applied; %s",
			ErrUsage, sel.include.text, list)
	}
	if sel.exclude != nil && !in.exclude {
		return fmt.Errorf("%w: --exclude-gtids %s: none of its GTIDs is in the files given, so it would leave nothing out and "+
			"what it was meant to leave out would be applied; %s. To start after what the target already holds, "+
			"give --start-gtid", ErrUsage, sel.exclude.text, list)
	}
	if len(sums) > 0 && sel.startOff > sums[0].End {
		return fmt.Errorf("%w: --start-position %d is past the end of %s, whose last event ends at %d: nothing of it "+
			"would be applied; give the \"# at N\" of the transaction to start with", ErrUsage, sel.startOff, sums[0].Name, sums[0].End)
	}
	return nil
}

// filter is the selection as an apply filter (see decide), noting whether
// a stop bound ended it.
func (sel *Selection) filter(t *txn.Txn) apply.Action { return sel.watch.note(sel.decide(t)) }

// unreached says, after a run, that the files ended before the stop bounds
// given: everything in them was selected, which is right when the stop
// lies in a file not given yet, and the transaction the recovery was to
// leave out when the stop was mistyped. "" when there is nothing to say
// (no stop given, a stop reached, or no transaction asked about: all were
// applied by an earlier run).
func (sel *Selection) unreached() string {
	if sel.stopNamed == "" || !sel.watch.unreached() {
		return ""
	}
	return "the files ended before " + sel.stopNamed + " was reached: every transaction in them was selected. " +
		"If the stop lies in a later file, give that file too; if it was mistyped, what it was to leave out is selected"
}

// warnings are what to say after a run: the stop not reached, and
// unmatched (the table filter's unmatched includes) when the run asked
// about a transaction at all.
func (sel *Selection) warnings(unmatched string) []string {
	var out []string
	if msg := sel.unreached(); msg != "" {
		out = append(out, msg)
	}
	if unmatched != "" && sel.watch.asked {
		out = append(out, unmatched)
	}
	return out
}

// decide applies the selection to t. Its order: what stops comes first
// (mysqlbinlog stops reading there), then what skips.
func (sel *Selection) decide(t *txn.Txn) apply.Action {
	if !sel.stopAt.IsZero() && !t.Timestamp.Before(sel.stopAt) {
		return apply.Stop
	}
	if sel.stopOff > 0 && t.End.File == sel.lastFile && t.End.Offset > sel.stopOff {
		return apply.Stop
	}
	if sel.startOff > 0 && t.Start.File == sel.firstFile && t.Start.Offset < sel.startOff {
		if t.End.File != t.Start.File || t.End.Offset > sel.startOff { // a relay log's transaction may go on into the next file
			// An offset inside a transaction (the "# at N" of its table
			// map, say) is a mistake either way it is read: mysqlbinlog
			// applies the rest of the transaction without its start, and
			// skipping the transaction leaves out what was asked for.
			// Every transaction before it was skipped: nothing is applied.
			name := "the transaction"
			if t.GTID != "" {
				name = "transaction " + t.GTID
			}
			after := fmt.Sprintf("%d to start after it", t.End.Offset)
			end := fmt.Sprint(t.End.Offset)
			if t.End.File != t.Start.File {
				after = fmt.Sprintf("give %s first with --start-position %d to start after it", t.End.File, t.End.Offset)
				end = t.End.String()
			}
			sel.startInside = fmt.Errorf("%w: --start-position %d is inside %s, which runs from %s:%d to %s: "+
				"give --start-position %d to apply it, or %s", ErrUsage, sel.startOff, name,
				t.Start.File, t.Start.Offset, end, t.Start.Offset, after)
			return apply.Stop
		}
		return apply.Skip
	}
	if !sel.startTime.IsZero() && t.Timestamp.Before(sel.startTime) {
		return apply.Skip
	}
	if sel.startPos != nil && sel.startPos.Contains(t) {
		return apply.Skip
	}
	if sel.skipGTID[t.GTID] || sel.skipPos[t.Start] {
		return apply.Skip
	}
	if sel.include != nil && !sel.include.contains(t) {
		return sel.last(t, apply.Skip)
	}
	if sel.exclude != nil && sel.exclude.contains(t) {
		return sel.last(t, apply.Skip)
	}
	if sel.database != "" && !sel.keepDatabase(t) {
		return sel.last(t, apply.Skip)
	}
	if sel.until != nil {
		return sel.until(t)
	}
	return apply.Apply
}

// last turns a skip into a stop when the transaction is --stop-gtid's: the
// stop still happens after it.
func (sel *Selection) last(t *txn.Txn, a apply.Action) apply.Action {
	if sel.until != nil && sel.until(t) == apply.Last {
		return apply.Stop
	}
	return a
}

// keepDatabase prunes t to --database as mysqlbinlog does (rows by their
// table's database, statements by their default database) and reports
// whether anything is left.
func (sel *Selection) keepDatabase(t *txn.Txn) bool {
	kept := t.Changes[:0]
	for _, c := range t.Changes {
		switch {
		case c.Row != nil && c.Row.Table.Schema == sel.database:
			kept = append(kept, c)
		case c.Stmt != nil && c.Stmt.Schema == sel.database:
			kept = append(kept, c)
		}
	}
	clear(t.Changes[len(kept):])
	t.Changes = kept
	return len(kept) > 0
}

// logSelection says in the log what the selection is, times with their
// zone, so a misread zone shows before anything is applied.
func (sel *Selection) logSelection(log *slog.Logger) {
	var attrs []any
	if !sel.startTime.IsZero() {
		attrs = append(attrs, "start_datetime", sel.startTime.In(sel.loc).Format(TimeLayout))
	}
	if !sel.stopAt.IsZero() {
		attrs = append(attrs, "stop_datetime", sel.stopAt.In(sel.loc).Format(TimeLayout))
	}
	if sel.startOff > 0 {
		attrs = append(attrs, "start_position", fmt.Sprintf("%s:%d", sel.firstFile, sel.startOff))
	}
	if sel.stopOff > 0 {
		attrs = append(attrs, "stop_position", fmt.Sprintf("%s:%d", sel.lastFile, sel.stopOff))
	}
	if sel.database != "" {
		attrs = append(attrs, "database", sel.database)
	}
	if len(attrs) > 0 {
		log.Info("selection", attrs...)
	}
}

// Location is the time zone of the selection's datetimes without one.
func (sel *Selection) Location() *time.Location { return sel.loc }
