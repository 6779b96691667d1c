package binlog

import (
	"strings"
)

// queryKind is what a Query event means to the transaction assembler.
type queryKind int

const (
	qkDDL        queryKind = iota // anything else: DDL, run alone
	qkBegin                       // BEGIN / START TRANSACTION
	qkCommit                      // COMMIT
	qkRollback                    // ROLLBACK (the whole transaction)
	qkSavepoint                   // SAVEPOINT x / ROLLBACK TO x / RELEASE SAVEPOINT x
	qkXAStart                     // XA START / XA BEGIN
	qkXAEnd                       // XA END
	qkXAPrepare                   // XA PREPARE (MySQL logs it as its own event)
	qkXAComplete                  // XA COMMIT / XA ROLLBACK of a prepared transaction
	qkXAOnePhase                  // XA COMMIT ... ONE PHASE
	qkDML                         // INSERT/UPDATE/DELETE/REPLACE/LOAD: statement-based
)

// classifyQuery reads the leading keywords of a Query event's SQL.
func classifyQuery(sql string) queryKind {
	w := leadingWords(sql, 3)
	if len(w) == 0 {
		return qkDDL
	}
	switch w[0] {
	case "BEGIN":
		return qkBegin
	case "START":
		if len(w) > 1 && w[1] == "TRANSACTION" {
			return qkBegin
		}
	case "COMMIT":
		return qkCommit
	case "ROLLBACK":
		if len(w) > 1 && w[1] == "TO" {
			return qkSavepoint
		}
		return qkRollback
	case "SAVEPOINT":
		return qkSavepoint
	case "RELEASE":
		return qkSavepoint
	case "XA":
		if len(w) < 2 {
			return qkDDL
		}
		switch w[1] {
		case "START", "BEGIN":
			return qkXAStart
		case "END":
			return qkXAEnd
		case "PREPARE":
			return qkXAPrepare
		case "COMMIT":
			if strings.Contains(strings.ToUpper(sql), "ONE PHASE") {
				return qkXAOnePhase
			}
			return qkXAComplete
		case "ROLLBACK":
			return qkXAComplete
		}
	case "INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD", "WITH":
		return qkDML
	}
	return qkDDL
}

// leadingWords returns up to n upper-cased leading words of sql, skipping
// whitespace and comments (/* */, -- and #; /*! */ version comments are
// skipped too, which only matters for DDL).
func leadingWords(sql string, n int) []string {
	var words []string
	s := sql
	for len(words) < n {
		s = skipSpaceAndComments(s)
		if s == "" {
			break
		}
		i := 0
		for i < len(s) && isWordByte(s[i]) {
			i++
		}
		if i == 0 {
			break
		}
		words = append(words, strings.ToUpper(s[:i]))
		s = s[i:]
	}
	return words
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func skipSpaceAndComments(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		switch {
		case strings.HasPrefix(s, "/*"):
			end := strings.Index(s[2:], "*/")
			if end < 0 {
				return ""
			}
			s = s[2+end+2:]
		case strings.HasPrefix(s, "-- "), strings.HasPrefix(s, "#"):
			end := strings.IndexByte(s, '\n')
			if end < 0 {
				return ""
			}
			s = s[end+1:]
		default:
			return s
		}
	}
}

// xaArgs returns the text after "XA <verb>" (the xid, with any trailing
// words such as ONE PHASE), e.g. "X'7831',X”,1" from "XA END X'7831',X”,1".
func xaArgs(sql string) string {
	s := skipSpaceAndComments(sql)
	for range 2 { // "XA" and the verb
		i := 0
		for i < len(s) && isWordByte(s[i]) {
			i++
		}
		s = skipSpaceAndComments(s[i:])
	}
	return strings.TrimSpace(s)
}
