package binlog

import (
	"strings"

	"github.com/prepl/prepl/txn"
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
	w := txn.LeadingWords(sql, 3)
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

// createsTable reports whether sql is a CREATE [OR REPLACE] TABLE of a
// table that is not temporary.
func createsTable(sql string) bool {
	w := txn.LeadingWords(sql, 4)
	if len(w) < 2 || w[0] != "CREATE" {
		return false
	}
	w = w[1:]
	if len(w) >= 2 && w[0] == "OR" && w[1] == "REPLACE" {
		w = w[2:]
	}
	return len(w) > 0 && w[0] == "TABLE"
}

// dropsTable reports whether sql is a DROP TABLE of tables that are not
// temporary.
func dropsTable(sql string) bool {
	w := txn.LeadingWords(sql, 2)
	return len(w) == 2 && w[0] == "DROP" && w[1] == "TABLE"
}

// xaArgs returns the text after "XA <verb>": the xid, with any trailing
// words such as ONE PHASE. From the first line it returns the second:
//
//	XA END X'7831',X'',1
//	X'7831',X'',1
func xaArgs(sql string) string {
	s := txn.SkipSpaceAndComments(sql)
	for _, w := range txn.LeadingWords(s, 2) { // "XA" and the verb
		s = txn.SkipSpaceAndComments(s[len(w):])
	}
	return strings.TrimSpace(s)
}
