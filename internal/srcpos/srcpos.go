// Package srcpos reads how far a MySQL or MariaDB server has written its
// binary log, over an ordinary SQL connection: the statements differ by
// server and version (docs/versions.md), and prepl copy, the source-end
// poller and prepl verify --online ask the same. The replication stream
// asks it over its own protocol connection (binlog/stream).
package srcpos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Querier is a *sql.DB or a *sql.Conn.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ErrNoBinlog: the server writes no binary log.
var ErrNoBinlog = errors.New("the source has no binary log (SHOW MASTER STATUS is empty; log_bin=OFF)")

// Status is the first row of SHOW MASTER STATUS, or of SHOW BINARY LOG
// STATUS on MySQL 8.4, which removed the other (the same columns), as
// strings: File, Position, and the server's other columns.
func Status(ctx context.Context, q Querier) ([]string, error) {
	rows, err := q.QueryContext(ctx, "SHOW MASTER STATUS")
	if err != nil {
		var err2 error
		if rows, err2 = q.QueryContext(ctx, "SHOW BINARY LOG STATUS"); err2 != nil {
			return nil, fmt.Errorf("SHOW MASTER STATUS: %w; SHOW BINARY LOG STATUS: %v", err, err2)
		}
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNoBinlog
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = v.String
	}
	if len(out) < 2 || out[0] == "" {
		return nil, ErrNoBinlog
	}
	return out, nil
}

// FilePos is Status's binlog file and position.
func FilePos(ctx context.Context, q Querier) (file string, pos uint32, err error) {
	st, err := Status(ctx, q)
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.ParseUint(st[1], 10, 32)
	if err != nil {
		return "", 0, fmt.Errorf("SHOW MASTER STATUS: position %q: %w", st[1], err)
	}
	return st[0], uint32(p), nil
}

// GTIDs reads the GTIDs the server has written: gtid_binlog_pos on
// MariaDB, gtid_executed on MySQL (its newlines taken out).
func GTIDs(ctx context.Context, q Querier, mariadb bool) (string, error) {
	v := "@@GLOBAL.gtid_executed"
	if mariadb {
		v = "@@GLOBAL.gtid_binlog_pos"
	}
	var g sql.NullString
	if err := q.QueryRowContext(ctx, "SELECT "+v).Scan(&g); err != nil {
		return "", err
	}
	return strings.ReplaceAll(g.String, "\n", ""), nil
}

// IsMariaDB reports whether the server is MariaDB, from its VERSION().
func IsMariaDB(ctx context.Context, q Querier) (bool, error) {
	var version string
	if err := q.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return false, err
	}
	return strings.Contains(strings.ToLower(version), "mariadb"), nil
}
