package run

import "github.com/prepl/prepl/mysql"

// sourceNeeds are what prepl asks of the source's user (the target's are
// mysql.Target.CheckStart's).
var sourceNeeds = []mysql.Need{
	{Priv: "REPLICATION SLAVE", Why: "read the binlog over the replication protocol"},
	{Priv: "REPLICATION CLIENT", Why: "SHOW MASTER STATUS and SHOW BINARY LOGS (MariaDB 10.5+: BINLOG MONITOR)"},
	{Priv: "SELECT", Why: "read the source's catalog and verify tables"},
}
