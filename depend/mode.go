package depend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prepl/prepl/txn"
)

// Mode is a dependency mode: the rule that decides which transactions may
// run at the same time (DESIGN.md, "Dependency modes"). For T earlier and U
// later in the stream:
//
//   - serial: U starts once every earlier transaction is Done.
//   - commit-order: MariaDB (CommitID != 0): U starts with T when both have
//     the same commit id and are consecutive batch members, else once the
//     whole previous batch is Done. MySQL (LastCommitted, SequenceNumber >=
//     0, no CommitID): U starts once every transaction of its binlog file
//     with SequenceNumber <= U.LastCommitted is Done. A new file (Start.File
//     changes, or SequenceNumber does not increase) restarts the clock: every
//     transaction of the new file also waits for everything not Done when the
//     file began. Untagged transactions are serial.
//   - writeset: U waits for every not-Done T whose Keys conflict with its
//     own; barriers (see Keys) wait for everything before and hold back
//     everything after.
//   - optimistic: everything starts at once except barriers (DDL, XA,
//     non-transactional, statements, tables the catalog says are not
//     transactional: what cannot be rolled back and retried), and, when the
//     transaction carries MariaDB GTID flags (Flags != 0 or CommitID != 0),
//     those flagged WAITED or without ALLOW_PARALLEL, which wait for their
//     predecessor. aggressive ignores the flags.
//   - schema: writeset (keys and barriers, across schemas too), and U also
//     waits for every not-Done T sharing its schema (Schemas); a
//     transaction touching several schemas, or none, is a barrier.
//   - domain: writeset, across MariaDB GTID domains too.
//
// Modes schema and domain differ from the others in the commit order
// (OrderKey), not in what may run: they commit in order within a schema or
// domain only. Keys still order transactions of different schemas/domains
// (U waits until T has committed), so the end state is the source's even
// when the application does not keep them independent.
//
// DDL, XA and non-transactional transactions are barriers in every mode.
type Mode string

const (
	Serial      Mode = "serial"       // nothing in parallel
	CommitOrder Mode = "commit-order" // the source's group commit tags (MariaDB commit_id, MySQL logical clock)
	Writeset    Mode = "writeset"     // row keys computed here; the default
	Optimistic  Mode = "optimistic"   // everything in parallel but barriers and WAITED/!ALLOW_PARALLEL
	Aggressive  Mode = "aggressive"   // everything in parallel but barriers
	Schema      Mode = "schema"       // serial within a schema; writeset across; commits in order per schema
	Domain      Mode = "domain"       // writeset; commits in order per MariaDB GTID domain
)

// DefaultMode is the mode used when none is asked for.
const DefaultMode = Writeset

// Modes lists every mode, default first.
var Modes = []Mode{Writeset, Serial, CommitOrder, Optimistic, Aggressive, Schema, Domain}

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Modes, m) {
		return m, nil
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown dependency mode %q (valid: %s)", s, strings.Join(names, ", "))
}

// Reason says why a transaction had to wait, or why it is a barrier.
type Reason string

const (
	ReasonNone             Reason = ""
	ReasonSerial           Reason = "serial"            // mode serial
	ReasonWhole            Reason = "whole"             // added without keys while one unit at a time ran (Tracker.AddWhole): barrier
	ReasonDDL              Reason = "ddl"               // DDL statement: barrier
	ReasonXA               Reason = "xa"                // XA transaction: barrier
	ReasonNonTransactional Reason = "non-transactional" // flagged so by the source, or a table the target says is not transactional: barrier
	ReasonStatement        Reason = "statement"         // a non-DDL statement inside a transaction: it may touch anything: barrier
	ReasonUnknownTable     Reason = "unknown-table"     // a table the catalog does not know: barrier
	ReasonForeignKey       Reason = "foreign-key"       // a change that can cascade into child rows (barrier), or a shared parent row
	ReasonTrigger          Reason = "trigger"           // a table with triggers on the target: they may write anywhere: barrier
	ReasonKeyConflict      Reason = "key-conflict"      // a shared primary or unique key value
	ReasonNoKey            Reason = "no-key"            // a table-wide key: no primary/unique key, or a key column missing from the image
	ReasonCommitOrder      Reason = "commit-order"      // the source's group commit tags (or their absence, or a binlog file boundary)
	ReasonWaitedFlag       Reason = "waited-flag"       // optimistic: MariaDB GTID flag WAITED set or ALLOW_PARALLEL clear
	ReasonSchema           Reason = "schema"            // mode schema: a shared schema, or several schemas (barrier)
)

// OrderKey is the commit-order group of tx under mode: transactions with the
// same key must commit in Seq order, different keys are independent. It is
// "" (one global order) for every mode but domain ("domain:N") and schema
// ("schema:db" when tx touches exactly one schema; a transaction touching
// several is a barrier, so its group does not matter).
func OrderKey(mode Mode, tx *txn.Txn) string {
	switch mode {
	case Domain:
		return fmt.Sprintf("domain:%d", tx.Domain)
	case Schema:
		if s := Schemas(tx); len(s) == 1 {
			return "schema:" + s[0]
		}
	}
	return ""
}

// Schemas returns the schemas tx touches, sorted, without duplicates: the
// schemas of its row changes' tables and the default schema of its
// statements (non-empty ones).
func Schemas(tx *txn.Txn) []string {
	var out []string
	for _, c := range tx.Changes {
		var s string
		switch {
		case c.Row != nil && c.Row.Table != nil:
			s = c.Row.Table.Schema
		case c.Stmt != nil:
			s = c.Stmt.Schema
		}
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// txBarrier is the barrier reason tx carries by itself, without a catalog.
func txBarrier(tx *txn.Txn) Reason {
	stmt := false
	for _, c := range tx.Changes {
		if c.Stmt != nil {
			if c.Stmt.DDL {
				return ReasonDDL
			}
			stmt = true
		}
	}
	switch {
	case tx.XA:
		return ReasonXA
	case tx.NonTransactional:
		return ReasonNonTransactional
	case stmt:
		return ReasonStatement
	}
	return ReasonNone
}

// hasMariaDBFlags reports whether tx.Flags were written by a MariaDB GTID
// event. A MariaDB 10.0+ GTID event of a transaction always carries a
// commit id or at least one of STANDALONE/TRANSACTIONAL, so all-zero flags
// with no commit id mean "no flags" (MySQL, or no GTID at all).
func hasMariaDBFlags(tx *txn.Txn) bool { return tx.Flags != 0 || tx.CommitID != 0 }

// waited reports whether optimistic mode must run tx only after its
// predecessor: the source flagged it WAITED (it waited on a row lock of
// another transaction) or did not allow it to run in parallel.
func waited(tx *txn.Txn) bool {
	if !hasMariaDBFlags(tx) {
		return false
	}
	return tx.Flags&txn.FlagWaited != 0 || tx.Flags&txn.FlagAllowParallel == 0
}
