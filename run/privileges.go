package run

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/mysql"
)

// need is a privilege a feature needs: missing, it is named in a warning
// at start, before the feature fails mid-run.
type need struct {
	priv   string
	schema string // "" global
	why    string
}

// sourceNeeds are what prepl asks of the source's user.
var sourceNeeds = []need{
	{"REPLICATION SLAVE", "", "read the binlog over the replication protocol"},
	{"REPLICATION CLIENT", "", "SHOW MASTER STATUS and SHOW BINARY LOGS (MariaDB 10.5+: BINLOG MONITOR)"},
	{"SELECT", "", "read the source's catalog and verify tables"},
}

// targetNeeds are what prepl asks of the target's user with cfg.
func targetNeeds(ctx context.Context, tgt *mysql.Target, cfg apply.Config) []need {
	db := tgt.DB
	n := []need{
		{"CREATE", mysql.PositionSchema, "create the position table " + mysql.PositionSchema + ".position"},
		{"INSERT", mysql.PositionSchema, "store the position"},
		{"UPDATE", mysql.PositionSchema, "store the position"},
		{"PROCESS", "", "read information_schema.INNODB_SYS_TABLES for the catalog digest that makes a DDL exactly-once after a crash (without it prepl stops and asks, --pending-ddl)"},
	}
	var triggers int
	db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA NOT IN ('mysql', 'sys')").Scan(&triggers)
	if triggers > 0 {
		n = append(n, need{"BINLOG REPLAY", "", "apply rows of tables with triggers on the target with the BINLOG statement (MariaDB 10.5.2+; SUPER before)"})
	}
	if tgt.KeepsGTIDs() {
		n = append(n, need{"BINLOG ADMIN", "", "SET sql_log_bin and the source GTID for --keep-gtid (or SUPER)"})
	}
	if cfg.Mode == depend.Optimistic || cfg.Mode == depend.Aggressive {
		n = append(n, need{"CONNECTION ADMIN", "", "KILL QUERY of a later transaction that holds a lock an earlier one waits for (or SUPER)"})
	}
	return n
}

// checkPrivileges warns about each privilege in needs the user of db on
// peer lacks, by SHOW GRANTS. It says nothing when the grants cannot be
// read or come through roles: the statement that needs it will fail
// with the server's own error then.
func checkPrivileges(ctx context.Context, log *slog.Logger, db *sql.DB, peer string, e mysql.Endpoint, needs []need) {
	g, err := mysql.ReadGrants(ctx, db)
	if err != nil || g.Unknown {
		return
	}
	for _, n := range needs {
		if g.Has(n.priv, n.schema) {
			continue
		}
		on := "*.*"
		if n.schema != "" {
			on = n.schema + ".*"
		}
		log.Warn(peer+" user lacks a privilege prepl needs", "privilege", n.priv, "on", on, "user", e.User, peer, e.String(),
			"needed_to", n.why, "grant", "GRANT "+n.priv+" ON "+on+" TO "+e.User)
	}
}
