package stream

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/txn"
)

// DetectFlavor asks the server its version.
func DetectFlavor(ctx context.Context, db *sql.DB) (txn.Flavor, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return "", fmt.Errorf("detect flavor: %w", err)
	}
	return binlog.FlavorOfVersion(v), nil
}

// Preflight checks that a source's binlog can be applied row by row. It
// refuses a source without a binlog or with binlog_format other than ROW,
// naming the setting to change, and warns about settings that make the
// binlog carry less than prepl would like.
func Preflight(ctx context.Context, db *sql.DB) (warnings []string, err error) {
	vars := map[string]string{}
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_bin', 'binlog_format', 'binlog_row_image', 'binlog_row_metadata')")
	if err != nil {
		return nil, fmt.Errorf("preflight: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("preflight: %w", err)
		}
		vars[strings.ToLower(k)] = strings.ToUpper(v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("preflight: %w", err)
	}
	if v := vars["log_bin"]; v != "ON" && v != "1" {
		return nil, fmt.Errorf("source has no binary log (log_bin=%s): start it with log_bin (log-bin=<basename> in my.cnf) and binlog_format=ROW", orUnset(v))
	}
	if v := vars["binlog_format"]; v != "ROW" {
		return nil, fmt.Errorf("source binlog_format is %s, prepl needs ROW: run SET GLOBAL binlog_format=ROW and set binlog_format=ROW in my.cnf (sessions already open keep the old format until they reconnect)", orUnset(v))
	}
	if v := vars["binlog_row_image"]; v != "FULL" {
		warnings = append(warnings, fmt.Sprintf("binlog_row_image is %s, not FULL: row images lack columns, so updates and deletes are located by what the image holds (SET GLOBAL binlog_row_image=FULL to fix)", orUnset(v)))
	}
	if v := vars["binlog_row_metadata"]; v != "FULL" {
		warnings = append(warnings, fmt.Sprintf("binlog_row_metadata is %s, not FULL: column names and keys will come from the target's schema, which must match the source's (SET GLOBAL binlog_row_metadata=FULL to fix)", orUnset(v)))
	}
	return warnings, nil
}

func orUnset(v string) string {
	if v == "" {
		return "unset"
	}
	return v
}
