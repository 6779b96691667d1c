package binlog

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrIncomplete is wrapped by the *FormatError returned when the last file
// ends inside a transaction: the source may still be writing it, so a caller
// may choose to wait and read again from the last complete transaction.
var ErrIncomplete = errors.New("incomplete transaction: no commit before the end of the binlog")

// ErrNotRowBased is wrapped by the *FormatError returned when a transaction
// carries DML as SQL text (binlog_format=STATEMENT or MIXED, or a table
// MariaDB logs as statements whatever the format): such a binlog cannot be
// applied row by row.
var ErrNotRowBased = errors.New("binlog is not row-based: DML logged as a statement")

// notRowBased is ErrNotRowBased for one statement, with the table it
// writes (when its leading words name it) and the two reasons a source
// logs DML as a statement.
func notRowBased(stmt, schema string) error {
	what := "a statement"
	if table := dmlTable(stmt, schema); table != "" {
		what = "a statement writing " + table
	}
	return fmt.Errorf("%w: %s (%.100q), which prepl cannot apply row by row. A source logs DML as a statement "+
		"when its session's binlog_format is STATEMENT or MIXED (SET GLOBAL binlog_format=ROW and binlog_format=ROW in my.cnf), "+
		"or, with ROW, for a table with transaction-precise system versioning (ROW START and ROW END BIGINT UNSIGNED), "+
		"which MariaDB cannot log as rows (give it TIMESTAMP(6) ROW START and ROW END columns)", ErrNotRowBased, what, stmt)
}

// dmlName is a table name, quoted or not, maybe qualified.
const dmlName = "((?:`(?:[^`]|``)+`|[\\w$]+)(?:\\s*\\.\\s*(?:`(?:[^`]|``)+`|[\\w$]+))?)"

var dmlTableRE = regexp.MustCompile(`(?is)^\s*(?:/\*.*?\*/\s*)*(?:` +
	`(?:INSERT|REPLACE)\s+(?:(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE)\s+)*(?:INTO\s+)?` + dmlName + `|` +
	`UPDATE\s+(?:(?:LOW_PRIORITY|IGNORE)\s+)*` + dmlName + `|` +
	`DELETE\s+(?:(?:LOW_PRIORITY|QUICK|IGNORE)\s+)*FROM\s+` + dmlName + `|` +
	`LOAD\s+(?:DATA|XML)\b.*?\bINTO\s+TABLE\s+` + dmlName + `)`)

var quotedRE = regexp.MustCompile("`(?:[^`]|``)+`")

// dmlTable names the table a DML statement writes, schema.table, or ""
// when its leading words do not say (a WITH, a multi-table DELETE).
func dmlTable(stmt, schema string) string {
	m := dmlTableRE.FindStringSubmatch(stmt)
	if m == nil {
		return ""
	}
	for _, name := range m[1:] {
		if name == "" {
			continue
		}
		if !strings.Contains(quotedRE.ReplaceAllString(name, "q"), ".") && schema != "" {
			name = "`" + strings.ReplaceAll(schema, "`", "``") + "`." + name
		}
		return name
	}
	return ""
}

// FormatError reports a binlog that cannot be read past a point: a
// truncated or corrupted event, a file that is not a binlog, an incomplete
// transaction, or statement-based DML. Every transaction that ended before
// Offset has been returned before the error.
type FormatError struct {
	File   string // base name of the binlog file
	Offset uint32 // where the damage (or the unusable transaction) starts
	GTID   string // of the transaction the damage is in, when known
	Err    error
}

func (e *FormatError) Error() string {
	if e.GTID != "" {
		return fmt.Sprintf("%s at offset %d (in transaction %s): %v", e.File, e.Offset, e.GTID, e.Err)
	}
	return fmt.Sprintf("%s at offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// Fatal says that a binlog that cannot be read past a point is fatal
// (package fault: reading it again finds the same bytes), unless it ends
// inside a transaction (ErrIncomplete) that the source may still be
// writing.
func (e *FormatError) Fatal() bool { return !errors.Is(e.Err, ErrIncomplete) }
