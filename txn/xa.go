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
// COMMIT), and the first other statement in it, which cannot be kept
// with the rows until XA COMMIT (nil when there is none).
func (t *Txn) XARows() (*Txn, *Statement) {
	rows := *t
	rows.Changes = make([]Change, 0, len(t.Changes))
	for _, ch := range t.Changes {
		if ch.Stmt == nil {
			rows.Changes = append(rows.Changes, ch)
			continue
		}
		switch v, _ := XAVerb(ch.Stmt.SQL); v {
		case "START", "BEGIN", "END", "PREPARE", "COMMIT":
			continue
		}
		return nil, ch.Stmt
	}
	return &rows, nil
}
