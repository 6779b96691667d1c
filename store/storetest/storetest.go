// Package storetest checks that a backend keeps the store.Store contract,
// so that MySQL's and PostgreSQL's channel stores are tested by the same
// code: each backend's test opens a target on a server and seeds it, then
// calls Run.
package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prepl/prepl/store"
)

// Seed is what Run needs written in the target's store before it checks
// it: a skip request for transaction SkipTxn on the target's channel,
// not yet done, and a stored position of channel OtherChannel, slot
// OtherSlot, whose GTID position is OtherGTIDPos. The target's channel
// has no stored position and no half-applied unit.
type Seed func(t *testing.T)

// What Seed writes.
const (
	SkipTxn      = "0-1-5"
	OtherChannel = "storetest-other"
	OtherSlot    = ""
	OtherGTIDPos = "0-1-9"
)

// Run checks s against the contract, after seed.
func Run(t *testing.T, s store.Store, seed Seed) {
	t.Helper()
	ctx := context.Background()
	channel := s.ChannelName()
	if channel == "" || channel == OtherChannel {
		t.Fatalf("ChannelName %q: open the target on a channel of its own", channel)
	}

	t.Run("lock", func(t *testing.T) {
		release, err := s.LockChannel(ctx, 0)
		if err != nil {
			t.Fatalf("first lock: %v", err)
		}
		if again, err := s.LockChannel(ctx, 0); err == nil {
			again()
			release()
			t.Fatal("a second lock of the channel was granted while the first is held")
		}
		release()
		release() // a second release is harmless
		// The server lets the lock go when it sees the connection go,
		// which may come a moment after release returns: wait as a run
		// does for a prepl that just went away.
		again, err := s.LockChannel(ctx, 10*time.Second)
		if err != nil {
			t.Fatalf("lock after the release: %v", err)
		}
		again()
	})

	seed(t)

	t.Run("skips", func(t *testing.T) {
		got, err := s.Skips(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := []store.Skip{{Txn: SkipTxn}}; !slices.Equal(got, want) {
			t.Fatalf("Skips = %v, want %v", got, want)
		}
		if err := s.MarkSkipped(ctx, SkipTxn); err != nil {
			t.Fatal(err)
		}
		got, err = s.Skips(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := []store.Skip{{Txn: SkipTxn, Done: true}}; !slices.Equal(got, want) {
			t.Fatalf("Skips after MarkSkipped = %v, want %v", got, want)
		}
	})

	t.Run("positions", func(t *testing.T) {
		chs, err := s.Channels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(chs, OtherChannel) || slices.Contains(chs, channel) {
			t.Fatalf("Channels = %q, want %q among them and not %q (no position stored)", chs, OtherChannel, channel)
		}
		ps, err := s.ChannelPositions(ctx, OtherChannel)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := ps[OtherSlot]; !ok || p.GTIDPos != OtherGTIDPos || len(ps) != 1 {
			t.Fatalf("ChannelPositions(%q) = %+v, want slot %q at %s only", OtherChannel, ps, OtherSlot, OtherGTIDPos)
		}
		// Reading another channel leaves the target on its own.
		if got := s.ChannelName(); got != channel {
			t.Fatalf("ChannelName = %q after reading channel %q, want %q", got, OtherChannel, channel)
		}
		ps, err = s.ChannelPositions(ctx, channel)
		if err != nil || len(ps) != 0 {
			t.Fatalf("ChannelPositions(%q) = %+v, %v; want none", channel, ps, err)
		}
		for _, ch := range []string{channel, OtherChannel} {
			if half, err := s.HalfApplied(ctx, ch); err != nil || half != "" {
				t.Fatalf("HalfApplied(%q) = %q, %v; want none", ch, half, err)
			}
		}
	})
}
