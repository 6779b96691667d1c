package mysql

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/depend"
)

// Need is a privilege a feature needs: missing, it is named in a warning
// at start, before the feature fails mid-run.
type Need struct {
	Priv   string
	Schema string // "" global
	Why    string
}

// CheckStart runs the checks before a run with cfg: it warns of each
// privilege the target's user lacks (it refuses nothing: the statement
// that needs the privilege fails with the server's own error).
func (t *Target) CheckStart(ctx context.Context, log *slog.Logger, cfg apply.Config) error {
	CheckPrivileges(ctx, log, t.DB, "target", t.Endpoint, t.needs(ctx, cfg))
	return nil
}

// needs are what prepl asks of the target's user with cfg.
func (t *Target) needs(ctx context.Context, cfg apply.Config) []Need {
	n := []Need{
		{"CREATE", PositionSchema, "create the position table " + PositionSchema + ".position"},
		{"INSERT", PositionSchema, "store the position"},
		{"UPDATE", PositionSchema, "store the position"},
		{"PROCESS", "", "read information_schema.INNODB_SYS_TABLES for the catalog digest that makes a DDL exactly-once after a crash (without it prepl stops and asks, --pending-ddl)"},
	}
	var triggers int
	t.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA NOT IN ('mysql', 'sys')").Scan(&triggers)
	if triggers > 0 {
		n = append(n, Need{"BINLOG REPLAY", "", "apply rows of tables with triggers on the target with the BINLOG statement (MariaDB 10.5.2+; SUPER before)"})
	}
	if t.KeepsGTIDs() {
		n = append(n, Need{"BINLOG ADMIN", "", "SET sql_log_bin and the source GTID for --keep-gtid (or SUPER)"})
	}
	if cfg.Mode == depend.Optimistic || cfg.Mode == depend.Aggressive {
		n = append(n, Need{"CONNECTION ADMIN", "", "KILL QUERY of a later transaction that holds a lock an earlier one waits for (or SUPER)"})
	}
	return n
}

// CheckPrivileges warns about each privilege in needs the user of db on
// peer ("source", "target") lacks, by SHOW GRANTS. It says nothing when
// the grants cannot be read or come through roles: the statement that
// needs it will fail with the server's own error then.
func CheckPrivileges(ctx context.Context, log *slog.Logger, db *sql.DB, peer string, e Endpoint, needs []Need) {
	g, err := ReadGrants(ctx, db)
	if err != nil || g.Unknown {
		return
	}
	for _, n := range needs {
		if g.Has(n.Priv, n.Schema) {
			continue
		}
		on := "*.*"
		if n.Schema != "" {
			on = n.Schema + ".*"
		}
		log.Warn(peer+" user lacks a privilege prepl needs", "privilege", n.Priv, "on", on, "user", e.User, peer, e.String(),
			"needed_to", n.Why, "grant", "GRANT "+n.Priv+" ON "+on+" TO "+e.User)
	}
}
