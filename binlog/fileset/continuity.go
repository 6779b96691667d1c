package fileset

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// Continuity of a file set.
//
// A set of binlog files is applied as one stream, so before anything is
// applied the files must be shown to follow each other: no file missing,
// none given twice, none out of order. The evidence, strongest first:
//
//   - GTIDs. Each file opens with the GTIDs logged before it (MariaDB
//     Gtid_list: the binlog state, the last seq_no of every domain and
//     server_id, the domain's most recent last; MySQL Previous_gtids: the
//     GTID set). A file's start must equal the previous file's start plus
//     the GTIDs the previous file holds, exactly: more is a gap, less a
//     repeat or a backward step. This needs no assumption that seq_nos are
//     contiguous, so it holds across failovers (several server_ids in one
//     domain) and for replicas that filter.
//   - Names: base.NNNNNN, the same base, the number up by one.
//   - The Rotate event that ends a file names the next one.
//
// When both files of a pair carry GTID lists, the GTIDs decide: a number
// skipped in the names then only means the skipped file holds no
// transactions (a note, not a gap). Without GTIDs (or with MySQL's
// anonymous transactions, which no GTID set counts) names and rotate decide.

type domainServer struct{ domain, server uint32 }

// MariaDBState is a MariaDB binlog state, what a Gtid_list event holds:
// the last seq_no of each (domain, server_id) and the most recent GTID of
// each domain.
type MariaDBState struct {
	last map[uint32]position.MariaGTID
	seq  map[domainServer]uint64
}

func newMariaDBState() *MariaDBState {
	return &MariaDBState{last: map[uint32]position.MariaGTID{}, seq: map[domainServer]uint64{}}
}

// ParseMariaDBState reads "0-1-57,0-2-80,1-1-9": GTIDs in Gtid_list order,
// so the last of each domain is its most recent.
func ParseMariaDBState(s string) (*MariaDBState, error) {
	st := newMariaDBState()
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		g, err := position.ParseMariaGTID(part)
		if err != nil {
			return nil, err
		}
		st.add(g)
	}
	return st, nil
}

func (s *MariaDBState) add(g position.MariaGTID) {
	s.last[g.Domain] = g
	s.seq[domainServer{g.Domain, g.Server}] = g.Seq
}

func (s *MariaDBState) clone() *MariaDBState {
	c := newMariaDBState()
	for k, v := range s.last {
		c.last[k] = v
	}
	for k, v := range s.seq {
		c.seq[k] = v
	}
	return c
}

func (s *MariaDBState) String() string {
	ks := make([]domainServer, 0, len(s.seq))
	for k := range s.seq {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].domain != ks[j].domain {
			return ks[i].domain < ks[j].domain
		}
		return ks[i].server < ks[j].server
	})
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = position.MariaGTID{Domain: k.domain, Server: k.server, Seq: s.seq[k]}.String()
	}
	return strings.Join(parts, ",")
}

// FileSummary is what the continuity check knows of one binlog file: read
// from its headers and GTID events only (ScanFile), or written by hand in
// tests.
type FileSummary struct {
	Name   string // base name
	Flavor txn.Flavor
	// HasGTIDList: the file opens with a Gtid_list (MariaDB) or
	// Previous_gtids (MySQL) event, so Start... below are known.
	HasGTIDList bool
	// MariaDB: the state before the file, after it, and the first GTID
	// of each domain in it.
	MariaDBStart, MariaDBEnd *MariaDBState
	MariaDBFirst             map[uint32]position.MariaGTID
	// MySQL: the GTIDs before the file and those in it.
	MySQLStart, MySQLHeld position.MySQLSet
	// Anonymous counts transactions without a GTID (MySQL gtid_mode OFF
	// or permissive), which no GTID list accounts for.
	Anonymous uint64
	// Rotate is the next file named by the Rotate event that ends the
	// file; "" when it ends otherwise (a stop, a crash, still written).
	Rotate string
	// Damaged is set when the scan could not read the file to its end:
	// what comes after is unknown, and the replay stops there anyway.
	Damaged error
	// End is the offset after the last whole event read: the file's
	// size, less a torn last event, or where the damage starts.
	End uint32
	// Relay: the file is a relay log (binlog/relay.go). The source's GTID list
	// in it is that of the source's binlog file it was fetched from, not
	// the relay log's start, so it is not read: relay logs are checked by
	// their names and rotate events.
	Relay bool
}

// ProblemKind says how a file set breaks.
type ProblemKind int

const (
	// Gap: transactions between two files (or between the stored
	// position and the first file) are missing. --allow-gaps accepts it.
	Gap ProblemKind = iota
	// Repeat: transactions would be applied twice.
	Repeat
	// Order: the files are complete but not in stream order.
	Order
	// Note: nothing is lost, but the check is weaker than usual here
	// (a warning, never a refusal).
	Note
)

// Problem is one break in a file set's continuity.
type Problem struct {
	Kind ProblemKind
	Msg  string
}

func (p Problem) String() string { return p.Msg }

// CheckContinuity reports where files, in the order given, do not form one
// stream. Files after the first damaged one are not checked: a replay
// stops at the damage.
func CheckContinuity(files []FileSummary) []Problem {
	if ps := duplicateNames(files); len(ps) > 0 {
		return ps
	}
	if p := nameOrder(files); p != nil {
		return []Problem{*p}
	}
	var out []Problem
	for i := 1; i < len(files); i++ {
		prev, next := &files[i-1], &files[i]
		if prev.Damaged != nil {
			break
		}
		out = append(out, checkPair(prev, next)...)
	}
	return out
}

// Refusals are the problems that stop a replay: every one but notes, and
// gaps too unless allowGaps.
func Refusals(ps []Problem, allowGaps bool) (refuse, warn []Problem) {
	for _, p := range ps {
		if p.Kind == Note || (p.Kind == Gap && allowGaps) {
			warn = append(warn, p)
		} else {
			refuse = append(refuse, p)
		}
	}
	return refuse, warn
}

func duplicateNames(files []FileSummary) []Problem {
	seen := map[string]int{}
	var out []Problem
	for i, f := range files {
		if j, ok := seen[f.Name]; ok {
			out = append(out, Problem{Repeat, fmt.Sprintf("%s is given twice (file %d and file %d): its transactions would be applied twice", f.Name, j+1, i+1)})
			continue
		}
		seen[f.Name] = i
	}
	return out
}

// seqName is a binlog file name split as base.NNNNNN.
type seqName struct {
	base  string
	n     uint64
	width int
}

func parseSeqName(name string) (seqName, bool) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return seqName{}, false
	}
	n, err := strconv.ParseUint(name[i+1:], 10, 64)
	if err != nil {
		return seqName{}, false
	}
	return seqName{name[:i], n, len(name) - i - 1}, true
}

func (s seqName) with(n uint64) string { return fmt.Sprintf("%s.%0*d", s.base, s.width, n) }

// nameOrder refuses numbered files of one base given out of numeric order,
// with the order to give them in.
func nameOrder(files []FileSummary) *Problem {
	names := make([]seqName, len(files))
	for i, f := range files {
		sn, ok := parseSeqName(f.Name)
		if !ok || (i > 0 && sn.base != names[0].base) {
			return nil
		}
		names[i] = sn
	}
	for i := 1; i < len(names); i++ {
		if names[i].n < names[i-1].n {
			sorted := make([]string, len(files))
			idx := make([]int, len(files))
			for j := range idx {
				idx[j] = j
			}
			sort.SliceStable(idx, func(a, b int) bool { return names[idx[a]].n < names[idx[b]].n })
			for j, k := range idx {
				sorted[j] = files[k].Name
			}
			return &Problem{Order, fmt.Sprintf("files out of order: %s is given after %s; give them in the order %s",
				files[i].Name, files[i-1].Name, strings.Join(sorted, " "))}
		}
	}
	return nil
}

// missingNames names the files a numbered pair skips, "" when none.
func missingNames(prev, next string) string {
	a, ok1 := parseSeqName(prev)
	b, ok2 := parseSeqName(next)
	if !ok1 || !ok2 || a.base != b.base || b.n <= a.n+1 {
		return ""
	}
	if b.n == a.n+2 {
		return a.with(a.n + 1)
	}
	return a.with(a.n+1) + ".." + a.with(b.n-1)
}

func checkPair(prev, next *FileSummary) []Problem {
	gtids, p := checkGTIDs(prev, next)
	if gtids {
		if p != nil {
			return []Problem{*p}
		}
		if m := missingNames(prev.Name, next.Name); m != "" {
			return []Problem{{Note, fmt.Sprintf("%s is not given between %s and %s; their GTID lists show it holds no transactions", m, prev.Name, next.Name)}}
		}
		return nil
	}
	return checkNames(prev, next)
}

// checkNames judges a pair by names and rotate alone.
func checkNames(prev, next *FileSummary) []Problem {
	if m := missingNames(prev.Name, next.Name); m != "" {
		return []Problem{{Gap, fmt.Sprintf("%s is followed by %s: %s missing (the files hold no GTIDs to check their transactions)",
			prev.Name, next.Name, plural(m))}}
	}
	if prev.Rotate != "" {
		if prev.Rotate != next.Name {
			return []Problem{{Gap, fmt.Sprintf("%s ends with a rotate to %s, but the next file given is %s", prev.Name, prev.Rotate, next.Name)}}
		}
		return nil
	}
	a, ok1 := parseSeqName(prev.Name)
	b, ok2 := parseSeqName(next.Name)
	if ok1 && ok2 && a.base == b.base && b.n == a.n+1 {
		return nil
	}
	return []Problem{{Note, fmt.Sprintf("cannot check that %s follows %s: no GTIDs, no rotate event, names not numbered in sequence", next.Name, prev.Name)}}
}

func plural(m string) string {
	if strings.Contains(m, "..") {
		return m + " are"
	}
	return m + " is"
}

// checkGTIDs compares next's GTID list with what prev ends with. ok is
// false when the pair cannot be judged by GTIDs.
func checkGTIDs(prev, next *FileSummary) (ok bool, p *Problem) {
	if !prev.HasGTIDList || !next.HasGTIDList || prev.Flavor != next.Flavor || prev.Anonymous > 0 {
		return false, nil
	}
	hint := ""
	if m := missingNames(prev.Name, next.Name); m != "" {
		hint = " (" + plural(m) + " missing?)"
	} else if prev.Rotate == "" {
		// A file followed by another ends with a rotate event.
		hint = " (" + prev.Name + " does not end with a rotate event: is it cut short?)"
	}
	if prev.Flavor == txn.MariaDB {
		if prev.MariaDBEnd == nil || next.MariaDBStart == nil {
			return false, nil
		}
		return true, compareMariaDB(prev, next, hint)
	}
	return true, compareMySQL(prev, next, hint)
}

func compareMariaDB(prev, next *FileSummary, hint string) *Problem {
	want, have := prev.MariaDBEnd, next.MariaDBStart
	domains := make([]uint32, 0, len(want.last)+len(have.last))
	for d := range want.last {
		domains = append(domains, d)
	}
	for d := range have.last {
		if _, ok := want.last[d]; !ok {
			domains = append(domains, d)
		}
	}
	sort.Slice(domains, func(i, j int) bool { return domains[i] < domains[j] })
	var gaps []string
	for _, d := range domains {
		if _, ok := have.last[d]; !ok {
			// A domain deleted from the binlog state (FLUSH BINARY LOGS
			// DELETE_DOMAIN_ID) is dropped from the next Gtid_list; the
			// server refuses that while a binlog still holds its GTIDs,
			// so a file that does means next comes before it.
			if _, held := prev.MariaDBFirst[d]; held {
				return mariaBackward(prev, next, d)
			}
			continue
		}
		ahead, behind := compareDomain(want, have, d)
		if behind {
			return mariaBackward(prev, next, d)
		}
		if ahead {
			gaps = append(gaps, fmt.Sprintf("%s starts %s but %s ends %s: %s missing",
				next.Name, startsAt(next, d), prev.Name, endsAt(want, d), mariaRange(want, d, have.last[d])))
		}
	}
	if len(gaps) == 0 {
		return nil
	}
	return &Problem{Gap, strings.Join(gaps, "; ") + hint}
}

// compareDomain: ahead when have holds GTIDs of domain d that want does
// not, behind when want holds some that have does not.
func compareDomain(want, have *MariaDBState, d uint32) (ahead, behind bool) {
	for k, q := range have.seq {
		if k.domain != d {
			continue
		}
		w, ok := want.seq[k]
		if !ok || q > w {
			ahead = true
		} else if q < w {
			behind = true
		}
	}
	for k := range want.seq {
		if _, ok := have.seq[k]; k.domain == d && !ok {
			behind = true
		}
	}
	return ahead, behind
}

func startsAt(f *FileSummary, d uint32) string {
	if g, ok := f.MariaDBFirst[d]; ok {
		return "at " + g.String()
	}
	if g, ok := f.MariaDBStart.last[d]; ok {
		return "after " + g.String()
	}
	return fmt.Sprintf("before any GTID of domain %d", d)
}

func endsAt(s *MariaDBState, d uint32) string {
	if g, ok := s.last[d]; ok {
		return "at " + g.String()
	}
	return fmt.Sprintf("before any GTID of domain %d", d)
}

// mariaRange names the GTIDs of domain d after from's most recent up to
// and including to.
func mariaRange(from *MariaDBState, d uint32, to position.MariaGTID) string {
	f, ok := from.last[d]
	if !ok {
		if to.Seq == 1 {
			return to.String() + " is"
		}
		return fmt.Sprintf("%d-%d-1..%s (every GTID of domain %d up to it) are", d, to.Server, to, d)
	}
	if f.Server == to.Server {
		if f.Seq+1 == to.Seq {
			return to.String() + " is"
		}
		return fmt.Sprintf("%s..%s are", position.MariaGTID{Domain: d, Server: to.Server, Seq: f.Seq + 1}, to)
	}
	return fmt.Sprintf("the GTIDs of domain %d after %s up to %s are", d, f, to)
}

func mariaBackward(prev, next *FileSummary, d uint32) *Problem {
	have := next.MariaDBStart
	if have.String() == prev.MariaDBStart.String() {
		at := have.String()
		if at == "" {
			at = "no GTIDs before them"
		}
		return &Problem{Repeat, fmt.Sprintf("%s and %s start at the same GTID position (%s): the same file twice? its transactions would be applied twice",
			prev.Name, next.Name, at)}
	}
	if before(have, prev.MariaDBStart) {
		return &Problem{Order, fmt.Sprintf("%s starts %s, before %s does (%s): it comes earlier in the stream; give the files in stream order",
			next.Name, startsAt(next, d), prev.Name, startsAt(prev, d))}
	}
	return &Problem{Repeat, fmt.Sprintf("%s starts %s but %s ends %s: %s in both and would be applied twice",
		next.Name, startsAt(next, d), prev.Name, endsAt(prev.MariaDBEnd, d), mariaRange(have, d, prev.MariaDBEnd.last[d]))}
}

// before: a is at or behind b in every (domain, server) of a.
func before(a, b *MariaDBState) bool {
	for k, q := range a.seq {
		if w, ok := b.seq[k]; !ok || q > w {
			return false
		}
	}
	return true
}

func compareMySQL(prev, next *FileSummary, hint string) *Problem {
	want := prev.MySQLStart.Union(prev.MySQLHeld)
	have := next.MySQLStart
	missing, extra := have.Minus(want), want.Minus(have)
	switch {
	case extra.Empty() && missing.Empty():
		return nil
	case extra.Empty():
		return &Problem{Gap, fmt.Sprintf("%s starts after %s but %s ends at %s: %s missing%s",
			next.Name, orNone(have), prev.Name, orNone(want), missing, hint)}
	case have.Equal(prev.MySQLStart):
		return &Problem{Repeat, fmt.Sprintf("%s and %s start at the same GTID set (%s): the same file twice? its transactions would be applied twice",
			prev.Name, next.Name, orNone(have))}
	case !prev.MySQLStart.Minus(have).Empty() && have.Minus(prev.MySQLStart).Empty():
		return &Problem{Order, fmt.Sprintf("%s starts after %s, before %s does (after %s): it comes earlier in the stream; give the files in stream order",
			next.Name, orNone(have), prev.Name, orNone(prev.MySQLStart))}
	}
	return &Problem{Repeat, fmt.Sprintf("%s starts after %s but %s ends at %s: %s would be applied twice",
		next.Name, orNone(have), prev.Name, orNone(want), extra)}
}

func orNone(s position.MySQLSet) string {
	if s.Empty() {
		return "(no GTIDs)"
	}
	return s.String()
}

// CheckResume reports a gap between a position already applied (pos, a
// MariaDB gtid_slave_pos or MySQL GTID set; file, a binlog file name, for
// streams without GTIDs) and the first file given. what names the position
// ("the stored position", "--start-gtid"). Files that start at or before
// the position are fine: what is already applied is skipped.
func CheckResume(what, pos, file string, first FileSummary) *Problem {
	pos = strings.TrimSpace(pos)
	if pos != "" && first.Relay && first.Flavor == txn.MariaDB && !strings.Contains(pos, ":") {
		return resumeMariaDB(what, pos, first)
	}
	if pos != "" && first.HasGTIDList {
		if strings.Contains(pos, ":") {
			if first.Flavor == txn.MariaDB {
				return nil
			}
			return resumeMySQL(what, pos, first)
		}
		if first.Flavor != txn.MariaDB {
			return nil
		}
		return resumeMariaDB(what, pos, first)
	}
	if file == "" {
		return nil
	}
	if m := missingNames(file, first.Name); m != "" {
		return &Problem{Gap, fmt.Sprintf("%s is in %s but the first file given is %s: %s missing", what, file, first.Name, plural(m))}
	}
	return nil
}

func resumeMariaDB(what, pos string, first FileSummary) *Problem {
	applied, err := ParseMariaDBState(pos)
	if err != nil || first.MariaDBStart == nil && !first.Relay {
		return nil
	}
	domains := make([]uint32, 0, len(applied.last))
	for d := range applied.last {
		domains = append(domains, d)
	}
	sort.Slice(domains, func(i, j int) bool { return domains[i] < domains[j] })
	var gaps []string
	for _, d := range domains {
		at := applied.last[d]
		before, ok := first.lastBefore(d)
		if !ok || before.Seq <= at.Seq {
			continue
		}
		starts := first.Name + " starts " + startsAt(&first, d)
		if first.Relay {
			starts = "the first transaction of relay log " + first.Name + " is " + first.MariaDBFirst[d].String()
		}
		gaps = append(gaps, fmt.Sprintf("%s ends at %s but %s: %s missing", what, at, starts, mariaRange(applied, d, before)))
	}
	if len(gaps) == 0 {
		return nil
	}
	return &Problem{Gap, strings.Join(gaps, "; ")}
}

// lastBefore is the last GTID of domain d before the file: from its GTID
// list, or, for a relay log, which has none of its own, the one before
// its first (a transaction begun in the relay file before it, not given,
// counts as missing too).
func (f *FileSummary) lastBefore(d uint32) (position.MariaGTID, bool) {
	if f.Relay {
		g, ok := f.MariaDBFirst[d]
		g.Seq--
		return g, ok
	}
	g, ok := f.MariaDBStart.last[d]
	return g, ok
}

func resumeMySQL(what, pos string, first FileSummary) *Problem {
	applied, err := position.ParseMySQLSet(pos)
	if err != nil {
		return nil
	}
	// A first run stores only the GTIDs it applied, not those before its
	// first file: count as missing only what lies above the lowest GTID
	// applied of each server.
	missing := position.MySQLSet{}
	for u, ivs := range first.MySQLStart.Minus(applied) {
		a := applied[u]
		if len(a) == 0 {
			continue
		}
		for _, iv := range ivs {
			if iv.Hi < a[0].Lo {
				continue
			}
			if iv.Lo < a[0].Lo {
				iv.Lo = a[0].Lo
			}
			missing[u] = append(missing[u], iv)
		}
	}
	if missing.Empty() {
		return nil
	}
	return &Problem{Gap, fmt.Sprintf("%s is %s but %s starts after %s: %s missing", what, applied, first.Name, first.MySQLStart, missing)}
}
