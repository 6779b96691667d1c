package mysql_test

import (
	"context"
	"testing"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// TestDDLSessionCharsets sets a DDL's session from the collation ids a
// Query event carries, on a MariaDB target: any collation (not only a
// character set's default) after SET NAMES ... COLLATE, and MySQL 8's
// utf8mb4_0900_ai_ci, which MariaDB does not have, as utf8mb4's default.
func TestDDLSessionCharsets(t *testing.T) {
	ctx := context.Background()
	s := sandbox.MustStart(t, sandbox.Defaults())
	tgt := openTarget(t, s, s.URL())
	c, err := tgt.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		client, conn, server uint16
		want                 [3]string // client, connection, server as the target names them
	}{
		{46, 46, 8, [3]string{"utf8mb4", "utf8mb4_bin", "latin1_swedish_ci"}},             // SET NAMES utf8mb4 COLLATE utf8mb4_bin
		{224, 224, 224, [3]string{"utf8mb4", "utf8mb4_unicode_ci", "utf8mb4_unicode_ci"}}, // ... utf8mb4_unicode_ci
		{47, 47, 8, [3]string{"latin1", "latin1_bin", "latin1_swedish_ci"}},               // SET NAMES latin1 COLLATE latin1_bin
		{192, 192, 33, [3]string{"utf8mb3", "utf8mb3_unicode_ci", "utf8mb3_general_ci"}},
		{1070, 1070, 1070, [3]string{"utf8mb4", "utf8mb4_nopad_bin", "utf8mb4_nopad_bin"}},
		{63, 63, 8, [3]string{"binary", "binary", "latin1_swedish_ci"}},
		{8, 46, 77, [3]string{"latin1", "utf8mb4_bin", "latin2_bin"}},                              // three different sets
		{2307, 2307, 2304, [3]string{"utf8mb4", "utf8mb4_uca1400_as_cs", "utf8mb4_uca1400_ai_ci"}}, // MariaDB 10.10's UCA 14
		{255, 255, 255, [3]string{"utf8mb4", "utf8mb4_general_ci", "utf8mb4_general_ci"}},          // MySQL 8's utf8mb4_0900_ai_ci
		{45, 305, 255, [3]string{"utf8mb4", "utf8mb4_general_ci", "utf8mb4_general_ci"}},           // MySQL 8's utf8mb4_0900_as_cs
	} {
		st := &txn.Statement{SQL: "DO 1", CharsetClient: tc.client, CollationConn: tc.conn, CollationServer: tc.server}
		set := mysql.DDLSession(st, tgt.IsMariaDB, tgt.Charsets)
		if _, err := c.ExecContext(ctx, set); err != nil {
			t.Errorf("ids %d,%d,%d: %s: %v", tc.client, tc.conn, tc.server, set, err)
			continue
		}
		var got [3]string
		if err := c.QueryRowContext(ctx, "SELECT @@character_set_client, @@collation_connection, @@collation_server").
			Scan(&got[0], &got[1], &got[2]); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("ids %d,%d,%d: %s: session has %v, want %v", tc.client, tc.conn, tc.server, set, got, tc.want)
		}
	}
}
