package run

import (
	"context"
	"errors"
	"fmt"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/sequencer"
	"github.com/prepl/prepl/snapshot"
)

// TestFatal: what a restart cannot fix is fatal (exit 2), however deeply
// wrapped; a binlog that ends inside a transaction still being written, a
// lost connection or a cancelled run is not (exit 1, the position kept).
func TestFatal(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("apply 0-1-5: %w", err) }
	for _, c := range []struct {
		name  string
		err   error
		fatal bool
	}{
		{"usage", fmt.Errorf("%w: --source is required", ErrUsage), true},
		{"continuity", &continuityError{"the files do not form one stream"}, true},
		{"damaged binlog", wrap(&binlog.FormatError{File: "binlog.000001", Offset: 4, Err: errors.New("bad checksum")}), true},
		{"binlog ends inside a transaction", wrap(&binlog.FormatError{File: "binlog.000001", Err: binlog.ErrIncomplete}), false},
		{"rows not found", wrap(mysql.ErrRowCount), true},
		{"packet too large", wrap(mysql.ErrTooLarge), true},
		{"DDL PostgreSQL refuses", wrap(postgres.ErrRefusedDDL), true},
		{"no such PostgreSQL table", wrap(postgres.ErrNoTable), true},
		{"pending DDL", wrap(&mysql.PendingDDLError{}), true},
		{"critical load", fmt.Errorf("%w on the target", ErrCriticalLoad), false},
		{"not row-based", wrap(&binlog.FormatError{File: "binlog.000001", Err: binlog.ErrNotRowBased}), true},
		{"binlog cut short inside a transaction", &binlog.FormatError{File: "b", Err: fmt.Errorf("%w (unexpected EOF)", binlog.ErrIncomplete)}, false},
		{"unsupported on MySQL", wrap(mysql.ErrUnsupported), true},
		{"pending non-transactional rows", wrap(&mysql.PendingRowsError{Why: "no unique key"}), true},
		{"DDL not translated to PostgreSQL", wrap(postgres.ErrNotTranslated), true},
		{"unsupported by the PostgreSQL mapping", wrap(postgres.ErrUnsupported), true},
		{"PostgreSQL mapping options differ", wrap(postgres.ErrOptions), true},
		{"a key in the way on MySQL", wrap(&gomysql.MySQLError{Number: 1062}), true},
		{"a unique violation on PostgreSQL", wrap(&pgconn.PgError{Code: "23505"}), true},
		{"a deadlock past the retries", fmt.Errorf("%w: %w", sequencer.ErrGaveUp, &gomysql.MySQLError{Number: 1213}), false},
		{"a table missing from the MySQL catalog", wrap(mysql.ErrNoTable), true},
		{"a copy resumed after the source moved", wrap(snapshot.ErrMoved), true},
		{"BINLOG statement refused for want of a grant", wrap(mysql.ErrBinlogPrivilege), true},
		{"CREATE TABLE ... SELECT with --keep-gtid", wrap(mysql.ErrDDLWithRowsKeepGTID), true},
		{"connection lost", wrap(errors.New("dial tcp 127.0.0.1:3306: connection refused")), false},
		{"cancelled", wrap(context.Canceled), false},
	} {
		if got := Fatal(c.err); got != c.fatal {
			t.Errorf("%s: Fatal(%v) = %v, want %v", c.name, c.err, got, c.fatal)
		}
	}
}
