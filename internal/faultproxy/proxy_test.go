package faultproxy

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

func packet(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

func TestFramerFindsMiddleOfBigPacket(t *testing.T) {
	small, big := bytes.Repeat([]byte{1}, 10), bytes.Repeat([]byte{2}, 300)
	stream := append(append(append(packet(0, small), packet(1, nil)...), packet(2, big)...), packet(3, small)...)
	want := len(packet(0, small)) + 4 + 4 + 150 // header of the empty packet, then the big one's
	for _, chunk := range []int{1, 3, 7, 64, len(stream)} {
		f := &framer{}
		got := -1
		for off := 0; off < len(stream); off += chunk {
			end := min(off+chunk, len(stream))
			if i := f.scan(stream[off:end], 100); i >= 0 && got < 0 {
				got = off + i
			}
		}
		if got != want {
			t.Errorf("reads of %d bytes: corrupt index %d, want %d", chunk, got, want)
		}
	}
	if i := (&framer{}).scan(stream, 0); i != -1 {
		t.Errorf("want 0 (off): index %d", i)
	}
	if i := (&framer{}).scan(stream, 1000); i != -1 {
		t.Errorf("no packet of 1000 bytes: index %d", i)
	}
}

// echoServer echoes every connection; it closes with the test.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, msg []byte) ([]byte, error) {
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.Write(msg); err != nil {
		return nil, err
	}
	got := make([]byte, len(msg))
	_, err := io.ReadFull(c, got)
	return got, err
}

func TestStatesAndCorruption(t *testing.T) {
	p, err := Start(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	msg := packet(0, bytes.Repeat([]byte{7}, 100))
	if got, err := roundTrip(c, msg); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("up: %v %x", err, got)
	}

	p.Set(Stall)
	if _, err := roundTrip(c, msg); err == nil {
		t.Fatal("stalled: an answer came through")
	}
	p.Set(Up) // the held bytes arrive
	c.SetDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("after the stall: %v %x", err, got)
	}

	p.CorruptNext(50)
	got, err = roundTrip(c, msg)
	if err != nil || bytes.Equal(got, msg) || p.Corrupted() != 1 {
		t.Fatalf("corrupt: %v, same %v, corrupted %d", err, bytes.Equal(got, msg), p.Corrupted())
	}
	if diff := 0; true {
		for i := range got {
			if got[i] != msg[i] {
				diff++
			}
		}
		if diff != 1 || got[4+50] == msg[4+50] {
			t.Fatalf("%d bytes differ, want the middle byte of the payload only", diff)
		}
	}

	p.Set(Down)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("down: the open connection was not cut")
	}
	c2, err := net.Dial("tcp", p.Addr())
	if err == nil {
		c2.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c2.Read(make([]byte, 1)); err == nil {
			t.Fatal("down: a new connection was served")
		}
	}
	p.Set(Up)
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := roundTrip(c3, msg); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("up again: %v", err)
	}
}
