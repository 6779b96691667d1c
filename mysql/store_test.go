package mysql_test

import (
	"context"
	"testing"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/store/storetest"
)

// TestChannelStore checks the MySQL target against the channel store's
// contract (package storetest), which the PostgreSQL target keeps too.
func TestChannelStore(t *testing.T) {
	ctx := context.Background()
	s := sandbox.MustStart(t, sandbox.Defaults())
	tgt := openTarget(t, s, s.URL())
	storetest.Run(t, tgt, func(t *testing.T) {
		if err := tgt.AddSkip(ctx, storetest.SkipTxn); err != nil {
			t.Fatal(err)
		}
		e, err := mysql.ParseURL(s.URL())
		if err != nil {
			t.Fatal(err)
		}
		other, err := mysql.Open(ctx, e, storetest.OtherChannel)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		p := position.Checkpoint{Slot: storetest.OtherSlot, GTIDPos: storetest.OtherGTIDPos,
			Floor: position.Floor{GTIDPos: storetest.OtherGTIDPos}}
		if err := other.StorePosition(ctx, p); err != nil {
			t.Fatal(err)
		}
	})
}

// TestChannelAdmin: prepl skip and prepl reset change a MySQL target's
// channel as a PostgreSQL target's (package storetest).
func TestChannelAdmin(t *testing.T) {
	s := sandbox.MustStart(t, sandbox.Defaults())
	storetest.RunAdmin(t, openTarget(t, s, s.URL()))
}
