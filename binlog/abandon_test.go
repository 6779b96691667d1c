package binlog

import (
	"encoding/binary"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestAbandonForgetsTooBig: a live stream that reconnects in the middle of
// a transaction past --max-txn-size abandons it and reads the next
// transaction afresh; the refusal belongs to the abandoned one, so the
// next is returned, not refused as too big.
func TestAbandonForgetsTooBig(t *testing.T) {
	clean := readSeed(t, seedBinlogs[0])
	good, err := decodeBytes("crc32.000001", clean, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// A transaction followed by a smaller one; the limit lets the
	// smaller through (the cap counts the events before the commit, an
	// XID event of 31 bytes).
	big := -1
	for i, x := range good[:len(good)-1] {
		if x.Flags&txn.FlagStandalone == 0 && good[i+1].Flags&txn.FlagStandalone == 0 && len(x.Changes) > 0 && len(good[i+1].Changes) > 0 && good[i+1].Size < x.Size {
			big = i
			break
		}
	}
	if big < 0 {
		t.Fatal("the seed has no transaction followed by a smaller one")
	}
	limit := int64(good[big+1].Size - 31)
	// The file's events, by offset.
	type event struct{ off, end uint32 }
	var evs []event
	for off := uint32(4); off+19 <= uint32(len(clean)); {
		end := off + binary.LittleEndian.Uint32(clean[off+9:])
		evs = append(evs, event{off, end})
		off = end
	}
	d := NewDecoder(Limits{MaxTxn: limit}, nil)
	feed := func(e event) error {
		ev, err := d.Decode(clean[e.off:e.end])
		if err != nil {
			return err
		}
		_, err = d.Add(ev, int(e.end-e.off))
		return err
	}
	if err := feed(evs[0]); err != nil { // the format description
		t.Fatal(err)
	}
	b, next := good[big], good[big+1]
	for _, e := range evs[1:] {
		// Every event of the big transaction but its commit.
		if e.off >= b.Start.Offset && e.end < b.End.Offset {
			if err := feed(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	d.Abandon()
	d.Restart()
	if err := feed(evs[0]); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs[1:] {
		if e.off < next.Start.Offset || e.end > next.End.Offset {
			continue
		}
		ev, err := d.Decode(clean[e.off:e.end])
		if err != nil {
			t.Fatal(err)
		}
		tx, err := d.Add(ev, int(e.end-e.off))
		if err != nil {
			t.Fatalf("the transaction after an abandoned one of more than --max-txn-size: %v", err)
		}
		if tx != nil && (tx.GTID != next.GTID || len(tx.Changes) != len(next.Changes)) {
			t.Errorf("got %s with %d changes, want %s with %d", tx.GTID, len(tx.Changes), next.GTID, len(next.Changes))
		}
	}
}
