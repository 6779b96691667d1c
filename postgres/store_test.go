package postgres_test

import (
	"context"
	"testing"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/store/storetest"
)

// TestChannelStore checks the PostgreSQL target against the channel
// store's contract (package storetest), which the MySQL target keeps too.
func TestChannelStore(t *testing.T) {
	pg := sandbox.MustStartPostgres(t)
	db := sandbox.MustOpenPostgres(t, pg, "postgres")
	tgt := openTarget(t, pg.URL("postgres"))
	storetest.Run(t, tgt, func(t *testing.T) {
		sandbox.MustExec(t, db,
			"INSERT INTO prepl.skip (channel, txn) VALUES ('"+tgt.Channel+"', '"+storetest.SkipTxn+"')",
			"INSERT INTO prepl.position (channel, slot, gtid_pos, file, pos, last_gtid, floor_gtid) VALUES ('"+
				storetest.OtherChannel+"', '"+storetest.OtherSlot+"', '"+storetest.OtherGTIDPos+"', '', 0, '', '"+storetest.OtherGTIDPos+"')")
	})
}

// TestSecurityOfPlainConnection: the sandbox serves without TLS, and the
// start line says so.
func TestSecurityOfPlainConnection(t *testing.T) {
	pg := sandbox.MustStartPostgres(t)
	tgt := openTarget(t, pg.URL("postgres"))
	if got := tgt.Security(context.Background()); got != "none" {
		t.Fatalf("Security = %q, want none", got)
	}
}

// TestChannelAdmin: prepl skip and prepl reset change a PostgreSQL
// target's channel as a MySQL target's (package storetest).
func TestChannelAdmin(t *testing.T) {
	pg := sandbox.MustStartPostgres(t)
	storetest.RunAdmin(t, openTarget(t, pg.URL("postgres")))
}
