package mysql

import (
	"fmt"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
)

// TestClassifyGalera: what a Galera node answers when a write set fails
// certification, or when the node leaves the primary component, is
// retried: a certification failure like a deadlock, a node out of the
// cluster like a lost connection (reconnect, check the stored position,
// retry).
func TestClassifyGalera(t *testing.T) {
	for _, c := range []struct {
		num  uint16
		msg  string
		want Class
	}{
		{1213, "Deadlock found when trying to get lock; try restarting transaction", Retry}, // certification failure, brute-force abort
		{1047, "WSREP has not yet prepared node for application use", Connection},
		{1180, `Got error 6 "No such device or address" during COMMIT`, Connection},
		{1180, `Got error 5 "Input/output error" during COMMIT`, Connection},
		{1180, "wsrep_max_ws_rows exceeded", Fatal}, // a write set too big: the same on every node
		{1180, "wsrep_max_ws_size exceeded", Fatal},
		{1047, "Unknown command", Fatal}, // no wsrep: a protocol error, not a node leaving
		{1205, "Lock wait timeout exceeded; try restarting transaction", Retry},
	} {
		err := fmt.Errorf("commit: %w", &gomysql.MySQLError{Number: c.num, Message: c.msg})
		if got := Classify(err); got != c.want {
			t.Errorf("Classify(%d %q) = %v, want %v", c.num, c.msg, got, c.want)
		}
	}
}
