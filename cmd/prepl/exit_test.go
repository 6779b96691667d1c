package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/mysql"
)

// TestExitCodesMatchTheService: the errors a restart cannot fix exit with
// a status docs/prepl.service lists in RestartPreventExitStatus, and the
// others with one it restarts on.
func TestExitCodesMatchTheService(t *testing.T) {
	unit, err := os.ReadFile("../../docs/prepl.service")
	if err != nil {
		t.Fatal(err)
	}
	var prevent []string
	for _, line := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(line, "RestartPreventExitStatus="); ok {
			prevent = append(prevent, strings.Fields(v)...)
		}
	}
	if !strings.Contains(string(unit), "\nRestart=on-failure\n") || len(prevent) == 0 {
		t.Fatalf("docs/prepl.service: want Restart=on-failure and RestartPreventExitStatus=")
	}
	damaged := &binlog.FormatError{File: "binlog.000001", Offset: 1234, Err: errors.New("corrupted WriteRowsEventV1 event: column count 0")}
	cases := []struct {
		what    string
		err     error
		restart bool
	}{
		{"usage", fmt.Errorf("%w: --target is required", errUsage), false},
		{"damaged event", fmt.Errorf("source x: %w", damaged), false},
		{"not row-based", &binlog.FormatError{File: "b", Err: binlog.ErrNotRowBased}, false},
		{"divergence", fmt.Errorf("apply 0-1-5: %w", mysql.ErrRowCount), false},
		{"unsupported", fmt.Errorf("apply: %w", mysql.ErrUnsupported), false},
		{"a row past the target's max_allowed_packet", fmt.Errorf("apply 0-1-5: %w: %w", mysql.ErrTooLarge, gomysql.ErrPktTooLarge), false},
		{"a key in the way on the target", fmt.Errorf("apply 0-1-5: %w", &gomysql.MySQLError{Number: 1062, Message: "Duplicate entry '3' for key 'PRIMARY'"}), false},
		{"a table missing on the target", fmt.Errorf("apply 0-1-5: %w", &gomysql.MySQLError{Number: 1146, Message: "Table 'd.t' doesn't exist"}), false},
		{"a PostgreSQL unique violation", fmt.Errorf("apply 0-1-5: %w", &pgconn.PgError{Code: "23505"}), false},
		{"fenced: another prepl took the channel over", fmt.Errorf("apply 0-1-5: %w", mysql.ErrFenced), false},
		{"a deadlock past the retries", fmt.Errorf("apply 0-1-5: %w", &gomysql.MySQLError{Number: 1213, Message: "Deadlock found"}), true},
		{"last file still being written", &binlog.FormatError{File: "b", Err: binlog.ErrIncomplete}, true},
		{"source unreachable", fmt.Errorf("binlog stream: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")}), true},
	}
	for _, c := range cases {
		code := exitCode(c.err)
		prevented := slices.Contains(prevent, fmt.Sprint(code))
		if code == 0 || prevented == c.restart {
			t.Errorf("%s: exit %d, restart by the service %v, want %v", c.what, code, !prevented, c.restart)
		}
	}
}
