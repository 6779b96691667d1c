package run

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
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
		{"connection lost", wrap(errors.New("dial tcp 127.0.0.1:3306: connection refused")), false},
		{"cancelled", wrap(context.Canceled), false},
	} {
		if got := Fatal(c.err); got != c.fatal {
			t.Errorf("%s: Fatal(%v) = %v, want %v", c.name, c.err, got, c.fatal)
		}
	}
}
