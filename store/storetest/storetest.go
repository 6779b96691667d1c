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

	"github.com/prepl/prepl/position"
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

// RunAdmin checks what prepl skip and prepl reset change (store.Admin)
// on a target opened on a channel of its own, with nothing stored for it.
func RunAdmin(t *testing.T, a store.Admin) {
	t.Helper()
	ctx := context.Background()
	channel := a.ChannelName()

	t.Run("holder", func(t *testing.T) {
		if h := a.ChannelHolder(ctx); h != "" {
			t.Fatalf("ChannelHolder = %q with the lock free, want none", h)
		}
		release, err := a.LockChannel(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		h := a.ChannelHolder(ctx)
		release()
		if h == "" {
			t.Fatal("ChannelHolder is empty while the channel's lock is held")
		}
	})

	t.Run("skip", func(t *testing.T) {
		const id = "0-1-77"
		if err := a.AddSkip(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := a.MarkSkipped(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := a.AddSkip(ctx, id); err != nil { // asked again: to be skipped again
			t.Fatal(err)
		}
		got, err := a.Skips(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := []store.Skip{{Txn: id}}; !slices.Equal(got, want) {
			t.Fatalf("Skips after AddSkip, MarkSkipped, AddSkip = %v, want %v", got, want)
		}
	})

	t.Run("reset", func(t *testing.T) {
		p := position.Checkpoint{Slot: "", GTIDPos: "0-1-100", Floor: position.Floor{GTIDPos: "0-1-100"}}
		if err := a.StorePosition(ctx, p); err != nil {
			t.Fatal(err)
		}
		ps, err := a.Checkpoints(ctx)
		if err != nil || ps[""].GTIDPos != "0-1-100" || len(ps) != 1 {
			t.Fatalf("Checkpoints after StorePosition = %+v, %v; want slot \"\" at 0-1-100", ps, err)
		}
		if chs, err := a.Channels(ctx); err != nil || !slices.Contains(chs, channel) {
			t.Fatalf("Channels = %q, %v; want %q among them", chs, err, channel)
		}
		if err := a.ResetPositions(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.ResetSkips(ctx); err != nil {
			t.Fatal(err)
		}
		if ps, err := a.Checkpoints(ctx); err != nil || len(ps) != 0 {
			t.Fatalf("Checkpoints after ResetPositions = %+v, %v; want none", ps, err)
		}
		if sk, err := a.Skips(ctx); err != nil || len(sk) != 0 {
			t.Fatalf("Skips after ResetSkips = %v, %v; want none", sk, err)
		}
	})
}
