package txn

import "strings"

// XAKind is which binlog group of a transaction prepared with XA on the
// source a Txn is.
type XAKind uint8

// The XA groups.
const (
	XANone     XAKind = iota
	XAPrepare         // the prepared part: XA START ... XA PREPARE xid
	XAOnePhase        // MySQL: XA START ... XA COMMIT xid ONE PHASE
	XACommit          // XA COMMIT xid
	XARollback        // XA ROLLBACK xid
)

// XAGroup tells which XA group t is and its xid, from its last statement
// (see binlog's assembler).
func (t *Txn) XAGroup() (XAKind, string) {
	if !t.XA || len(t.Changes) == 0 || t.Changes[len(t.Changes)-1].Stmt == nil {
		return XANone, ""
	}
	w, args := XAVerb(t.Changes[len(t.Changes)-1].Stmt.SQL)
	switch {
	case w == "PREPARE":
		return XAPrepare, args
	case w == "COMMIT" && len(t.Changes) > 1:
		up := strings.ToUpper(args)
		if i := strings.LastIndex(up, "ONE"); i > 0 && strings.TrimSpace(up[i:]) == "ONE PHASE" {
			args = strings.TrimSpace(args[:i])
		}
		return XAOnePhase, args
	case w == "COMMIT":
		return XACommit, args
	case w == "ROLLBACK" && len(t.Changes) == 1:
		return XARollback, args
	}
	return XANone, ""
}

// XAVerb returns the verb of an XA statement (START, END, PREPARE,
// COMMIT, ROLLBACK) and the text after it (the xid), or "".
func XAVerb(sql string) (verb, args string) {
	w := LeadingWords(sql, 2)
	if len(w) < 2 || w[0] != "XA" {
		return "", ""
	}
	s := SkipSpaceAndComments(sql)
	for _, x := range w {
		s = SkipSpaceAndComments(s[len(x):])
	}
	return w[1], strings.TrimSpace(s)
}

// XARows returns t without its XA statements (XA START, END, PREPARE,
// COMMIT) and without the rows its savepoints undid, and the first other
// statement in it, which cannot be kept with the rows until XA COMMIT (nil
// when there is none).
//
// A ROLLBACK TO SAVEPOINT is in the binlog only when a non-transactional
// table was written meanwhile (otherwise the server cuts the undone rows
// out of the transaction's cache); the transactional rows it undid are
// logged before it, and the replica applies them and rolls them back. In
// ROW format a non-transactional table's rows go as a transaction of their
// own, so every rows event here is of a table transactional on the source:
// the rows kept are those between the savepoints that remained, as the
// source committed them. The savepoints follow the server's rules: SAVEPOINT
// x replaces an x set before, ROLLBACK TO x drops the savepoints set after
// x and keeps x, RELEASE SAVEPOINT x drops x and those after it.
func (t *Txn) XARows() (*Txn, *Statement) {
	rows := *t
	rows.Changes = make([]Change, 0, len(t.Changes))
	type mark struct {
		name string
		at   int // len(rows.Changes) when it was set
	}
	var marks []mark
	find := func(name string) int {
		for i := len(marks) - 1; i >= 0; i-- {
			if strings.EqualFold(marks[i].name, name) {
				return i
			}
		}
		return -1
	}
	for _, ch := range t.Changes {
		if ch.Stmt == nil {
			rows.Changes = append(rows.Changes, ch)
			continue
		}
		switch v, _ := XAVerb(ch.Stmt.SQL); v {
		case "START", "BEGIN", "END", "PREPARE", "COMMIT":
			continue
		}
		op, name := SavepointOf(ch.Stmt.SQL)
		i := find(name)
		switch {
		case op == SavepointSet:
			if i >= 0 {
				marks = append(marks[:i], marks[i+1:]...)
			}
			marks = append(marks, mark{name, len(rows.Changes)})
		case op == SavepointRollback && i >= 0:
			rows.Changes = rows.Changes[:marks[i].at]
			marks = marks[:i+1]
		case op == SavepointRelease && i >= 0:
			marks = marks[:i]
		default: // not a savepoint, or one never set (the source would have failed)
			return nil, ch.Stmt
		}
	}
	return &rows, nil
}

// SavepointOp is what a savepoint statement does.
type SavepointOp uint8

// The savepoint statements.
const (
	SavepointNone     SavepointOp = iota
	SavepointSet                  // SAVEPOINT x
	SavepointRollback             // ROLLBACK [WORK] TO [SAVEPOINT] x
	SavepointRelease              // RELEASE SAVEPOINT x
)

// SavepointOf reads a savepoint statement: what it does and the
// savepoint's name (unquoted), or SavepointNone.
func SavepointOf(sql string) (SavepointOp, string) {
	s := SkipSpaceAndComments(sql)
	word := func(w string) bool {
		if len(s) < len(w) || !strings.EqualFold(s[:len(w)], w) || len(s) > len(w) && isWordByte(s[len(w)]) {
			return false
		}
		s = SkipSpaceAndComments(s[len(w):])
		return true
	}
	var op SavepointOp
	switch {
	case word("SAVEPOINT"):
		op = SavepointSet
	case word("ROLLBACK"):
		word("WORK")
		if !word("TO") {
			return SavepointNone, ""
		}
		word("SAVEPOINT")
		op = SavepointRollback
	case word("RELEASE"):
		if !word("SAVEPOINT") {
			return SavepointNone, ""
		}
		op = SavepointRelease
	default:
		return SavepointNone, ""
	}
	name, rest, ok := identAt(s)
	if !ok || strings.TrimRight(SkipSpaceAndComments(rest), "; \t\r\n") != "" {
		return SavepointNone, ""
	}
	return op, name
}

// identAt reads the identifier s starts with: backquoted (a doubled
// backquote inside stands for one) or bare; it returns the name and what
// follows.
func identAt(s string) (name, rest string, ok bool) {
	if strings.HasPrefix(s, "`") {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] != '`' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '`' {
				b.WriteByte('`')
				i++
				continue
			}
			return b.String(), s[i+1:], b.Len() > 0
		}
		return "", "", false
	}
	i := 0
	for i < len(s) && (isWordByte(s[i]) || s[i] == '$' || s[i] >= 0x80) {
		i++
	}
	return s[:i], s[i:], i > 0
}
