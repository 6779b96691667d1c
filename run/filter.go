package run

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/filter"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/redact"
	"github.com/prepl/prepl/txn"
)

// withTables combines a command's own filter (GTIDs, times; nil applies
// everything) with the table filter, which runs on what the command's
// filter applies. A transaction with nothing left is skipped, so the
// position still moves past it.
func withTables(tables *filter.Filter, log *slog.Logger, cmd func(*txn.Txn) apply.Action) func(*txn.Txn) apply.Action {
	if tables == nil || tables.Empty() {
		return cmd
	}
	return func(t *txn.Txn) apply.Action {
		a := apply.Apply
		if cmd != nil {
			a = cmd(t)
		}
		if a != apply.Apply && a != apply.Last {
			return a
		}
		var ddl string
		if t.IsDDL() {
			ddl = t.Changes[0].Stmt.SQL
		}
		if tables.Apply(t) || t.XA {
			// An XA transaction's prepared part left with no rows is
			// still applied: its XA COMMIT looks for it.
			return a
		}
		if ddl != "" && log != nil {
			log.Info("DDL skipped by the table filter", "txn", mysql.TxnID(t), "sql", redact.SQL(ddl))
		}
		if a == apply.Last {
			// Nothing of the last transaction is applied: stop before it,
			// which leaves the target in the same state.
			return apply.Stop
		}
		return apply.Skip
	}
}

// unmatchedIncludes is the warning, after a run, for --include patterns
// that no table of the selected transactions matched: a pattern with a typo
// ("Shop.*" for shop) applies nothing of what it was meant for, and the
// run exits 0. "" when there is none.
func unmatchedIncludes(tables *filter.Filter) string {
	if tables == nil {
		return ""
	}
	un := tables.Unmatched()
	if len(un) == 0 {
		return ""
	}
	return fmt.Sprintf("--include %s matched no table in the transactions selected, so nothing of it is applied "+
		"(names are compared as the binlog has them, case included)", strings.Join(un, ", --include "))
}

// TableFilter makes the table filter of --include, --exclude,
// --rewrite-schema and --skip-rows; the source's own prepl schema is left
// out unless applyPreplSchema (on a source that is itself a prepl target
// it holds that prepl's positions, not data).
func TableFilter(include, exclude, rewrite, skipRows []string, applyPreplSchema bool) (*filter.Filter, error) {
	if !applyPreplSchema {
		exclude = append(exclude[:len(exclude):len(exclude)], mysql.PositionSchema+".*")
	}
	t, err := filter.New(include, exclude, rewrite)
	if err == nil {
		err = t.SkipRows(skipRows)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return t, nil
}
