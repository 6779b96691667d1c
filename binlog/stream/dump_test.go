package stream

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/binlog"
)

// wire builds what a source sends after the dump command: packets with
// their sequence numbers, starting at 1.
type wire struct {
	b   bytes.Buffer
	seq uint8
}

func newWire() *wire { return &wire{seq: 1} }

// packet appends one packet of payload p.
func (w *wire) packet(p []byte) *wire {
	w.b.Write([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), w.seq})
	w.b.Write(p)
	w.seq++
	return w
}

// event appends an event of type typ and size bytes (header included)
// as the source sends it: an OK byte, then the event, split into packets
// of maxPayload bytes.
func (w *wire) event(typ replication.EventType, size int) *wire {
	ev := make([]byte, size)
	ev[4] = byte(typ)
	binary.LittleEndian.PutUint32(ev[9:], uint32(size))
	p := append([]byte{mysql.OK_HEADER}, ev...)
	for {
		n := min(len(p), maxPayload)
		w.packet(p[:n])
		p = p[n:]
		if n < maxPayload {
			return w
		}
	}
}

// txn appends a transaction of n events after its GTID event.
func (w *wire) txn(n int) *wire {
	w.event(replication.MARIADB_GTID_EVENT, 42)
	for range n {
		w.event(replication.WRITE_ROWS_EVENTv1, 100)
	}
	return w.event(replication.XID_EVENT, 31)
}

func (w *wire) conn(max int64) *dumpConn {
	return &dumpConn{c: &client.Conn{}, r: bufio.NewReaderSize(bytes.NewReader(w.b.Bytes()), dumpReadBuffer), seq: 1, max: max}
}

// TestReadEvent: events come out whole, one packet or many; the packets
// that are not events are answered as the protocol says; damage is
// refused before anything is allocated for it.
func TestReadEvent(t *testing.T) {
	// Events of one packet, of exactly one full packet (an empty one
	// follows), and of three.
	for _, size := range []int{19, 100, maxPayload - 1, maxPayload, 2*maxPayload + 7} {
		d := newWire().event(replication.WRITE_ROWS_EVENTv1, size).packet([]byte{mysql.EOF_HEADER, 0, 0, 0, 0}).
			event(replication.XID_EVENT, 31).conn(binlog.DefaultMaxEventSize)
		ev, err := d.readEvent()
		if err != nil || len(ev) != size || ev[4] != byte(replication.WRITE_ROWS_EVENTv1) || binary.LittleEndian.Uint32(ev[9:]) != uint32(size) {
			t.Fatalf("event of %d bytes: got %d bytes, %v", size, len(ev), err)
		}
		// The EOF packet of a non-blocking dump is passed over.
		if ev, err := d.readEvent(); err != nil || len(ev) != 31 {
			t.Fatalf("after the event of %d bytes: %d bytes, %v", size, len(ev), err)
		}
		if _, err := d.readEvent(); err != io.EOF {
			t.Fatalf("at the end: %v, want io.EOF", err)
		}
	}

	errPacket := append([]byte{mysql.ERR_HEADER, 0xec, 0x04, '#'}, "HY000Could not find first log file name"...)
	for _, c := range []struct {
		name string
		w    *wire
		max  int64
		want string
	}{
		{"an error from the source", newWire().packet(errPacket), binlog.DefaultMaxEventSize, "Could not find first log file name"},
		{"a short error packet", newWire().packet([]byte{mysql.ERR_HEADER, 1}), binlog.DefaultMaxEventSize, "damaged error packet"},
		{"an empty packet", newWire().packet(nil), binlog.DefaultMaxEventSize, "empty packet"},
		{"a packet of another kind", newWire().packet([]byte{0x03, 1, 2}), binlog.DefaultMaxEventSize, "packet of type 0x03"},
		{"a lost packet", func() *wire { w := newWire(); w.seq = 2; return w.event(replication.XID_EVENT, 31) }(),
			binlog.DefaultMaxEventSize, "packet 2 where 1 was expected"},
		{"an event over the limit in one packet", newWire().event(replication.WRITE_ROWS_EVENTv1, 1000), 999, "larger than --max-event-size 999"},
		{"an event over the limit in its second packet", newWire().event(replication.WRITE_ROWS_EVENTv1, maxPayload+10), maxPayload,
			"larger than --max-event-size"},
		{"a packet cut short", func() *wire {
			w := newWire().event(replication.XID_EVENT, 31)
			w.b.Truncate(w.b.Len() - 1)
			return w
		}(), binlog.DefaultMaxEventSize, "unexpected EOF"},
	} {
		_, err := c.w.conn(c.max).readEvent()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
		var me *mysql.MyError
		if c.name == "an error from the source" && (!errors.As(err, &me) || me.Code != 1260) {
			t.Errorf("%s: %v is not the source's error 1260", c.name, err)
		}
		var big *errEventTooBig
		if strings.Contains(c.name, "over the limit") && (!errors.As(err, &big) || c.name == "an event over the limit in one packet" && len(big.header) != replication.EventHeaderSize) {
			t.Errorf("%s: %v is not an errEventTooBig with the event's header", c.name, err)
		}
	}
}

// TestReadEventScratch: GTID and XID events, which the guard decodes and
// forgets, reuse one buffer; the others, which transactions keep, never
// share memory.
func TestReadEventScratch(t *testing.T) {
	d := newWire().txn(2).txn(1).conn(binlog.DefaultMaxEventSize)
	var kept [][]byte
	var scratch []byte
	for {
		ev, err := d.readEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if binlog.Transient(replication.EventType(ev[4])) {
			if scratch != nil && &scratch[0] != &ev[0] {
				t.Errorf("%v event: a new buffer, not the scratch one", replication.EventType(ev[4]))
			}
			scratch = ev
			continue
		}
		for _, k := range kept {
			if &k[0] == &ev[0] {
				t.Fatalf("%v event shares memory with one read before", replication.EventType(ev[4]))
			}
		}
		kept = append(kept, ev)
	}
	if len(kept) != 3 {
		t.Fatalf("%d rows events, want 3", len(kept))
	}
}

// TestAtHand: the next transaction is at hand once the bytes read ahead
// hold it whole, which the start of the one after it shows.
func TestAtHand(t *testing.T) {
	whole := newWire().txn(3).txn(1).b.Bytes()
	firstEnd := len(newWire().txn(3).b.Bytes())
	for _, c := range []struct {
		name  string
		bytes int
		want  bool
	}{
		{"nothing read ahead", 0, false},
		{"part of a packet header", 3, false},
		{"the next transaction but its last byte", firstEnd - 1, false},
		{"the next transaction, whole, and no more", firstEnd, false},
		{"the next transaction and part of the GTID event after it", firstEnd + 10, false},
		{"the next transaction and the GTID event after it", firstEnd + 4 + 1 + 42, true},
		{"two transactions", len(whole), true},
	} {
		d := &dumpConn{r: bufio.NewReaderSize(bytes.NewReader(whole[:c.bytes]), dumpReadBuffer)}
		d.r.Peek(1) // fill the buffer with what has arrived
		if got := d.atHand(); got != c.want {
			t.Errorf("%s: atHand %v, want %v", c.name, got, c.want)
		}
	}
	// An event of more than one packet is not looked into: its second
	// packet holds bytes of the event, here ones that look like the start
	// of a GTID event.
	w := newWire().event(replication.MARIADB_GTID_EVENT, 42)
	start := w.b.Len()
	w.event(replication.WRITE_ROWS_EVENTv1, maxPayload+100)
	cont := w.b.Bytes()[start+4+maxPayload+4:] // the second packet's payload
	cont[0], cont[5] = mysql.OK_HEADER, byte(replication.MARIADB_GTID_EVENT)
	d := &dumpConn{r: bufio.NewReaderSize(bytes.NewReader(w.b.Bytes()), 2*maxPayload)}
	if _, err := d.r.Peek(w.b.Len()); err != nil {
		t.Fatal(err)
	}
	if d.atHand() {
		t.Error("atHand took bytes inside an event of two packets for a GTID event")
	}
}
