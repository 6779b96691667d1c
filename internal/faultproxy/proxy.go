// Package faultproxy is a TCP proxy for tests that puts network faults
// between a client and a server on this machine: it cuts connections,
// refuses them, stalls them (open, forwarding nothing, as a dead network
// or a hung server looks) and corrupts one byte of what the server sends.
//
// It listens on 127.0.0.1 only. Faults apply to the server-to-client
// direction where it matters (stall, corrupt); a cut closes both sides.
package faultproxy

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// State is what the proxy does with traffic.
type State int

const (
	// Up forwards everything.
	Up State = iota
	// Down closes every connection and refuses new ones (accepts and
	// closes them at once): the server looks unreachable.
	Down
	// Stall accepts connections and forwards nothing either way, on new
	// connections and on open ones (mid-stream): bytes wait in the proxy
	// until the state is Up again.
	Stall
)

func (s State) String() string {
	switch s {
	case Up:
		return "up"
	case Down:
		return "down"
	case Stall:
		return "stall"
	}
	return "unknown"
}

// Proxy forwards connections from Addr to an upstream address.
type Proxy struct {
	ln net.Listener

	mu       sync.Mutex
	upstream string
	state    State
	open     chan struct{} // closed while the state is Up
	conns    map[*pair]struct{}
	corrupt  int // packets of at least this size get one byte flipped; 0: off
	closed   bool

	accepted  atomic.Int64
	cuts      atomic.Int64
	corrupted atomic.Int64
	wg        sync.WaitGroup
}

// Start listens on a free port of 127.0.0.1 and forwards to upstream.
func Start(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, upstream: upstream, open: make(chan struct{}), conns: map[*pair]struct{}{}}
	close(p.open)
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetUpstream points new connections at another address (a server
// restarted on another port); open connections are cut.
func (p *Proxy) SetUpstream(addr string) {
	p.mu.Lock()
	p.upstream = addr
	p.mu.Unlock()
	p.Cut()
}

// Set changes the state. Going Down cuts every connection; leaving Stall
// lets stalled bytes through.
func (p *Proxy) Set(s State) {
	p.mu.Lock()
	if s == p.state {
		p.mu.Unlock()
		return
	}
	was := p.state
	p.state = s
	switch {
	case s == Up:
		close(p.open)
	case was == Up:
		p.open = make(chan struct{})
	}
	p.mu.Unlock()
	if s == Down {
		p.Cut()
	}
}

// State is the current state.
func (p *Proxy) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Cut closes every open connection (both sides) at once.
func (p *Proxy) Cut() {
	p.mu.Lock()
	ps := make([]*pair, 0, len(p.conns))
	for c := range p.conns {
		ps = append(ps, c)
	}
	p.mu.Unlock()
	for _, c := range ps {
		c.close()
	}
	p.cuts.Add(1)
}

// CorruptNext flips one byte in the middle of the payload of the next
// MySQL protocol packet of at least minSize bytes that the server sends
// (the packet's header is left alone, so the framing holds and the
// receiver sees a damaged payload: for a binlog event, a checksum that
// does not match).
func (p *Proxy) CorruptNext(minSize int) {
	p.mu.Lock()
	p.corrupt = max(minSize, 2)
	p.mu.Unlock()
}

// Accepted counts the connections accepted (refused ones included).
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Corrupted counts the bytes flipped.
func (p *Proxy) Corrupted() int64 { return p.corrupted.Load() }

// Conns is how many connections are open.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.Cut()
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		p.mu.Lock()
		state, upstream, closed := p.state, p.upstream, p.closed
		p.mu.Unlock()
		if state == Down || closed {
			c.Close()
			continue
		}
		pr := &pair{client: c, done: make(chan struct{})}
		p.mu.Lock()
		p.conns[pr] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.run(pr, upstream)
	}
}

// pair is one proxied connection.
type pair struct {
	client, server net.Conn
	mu             sync.Mutex
	done           chan struct{}
	once           sync.Once
}

func (c *pair) close() {
	c.once.Do(func() {
		close(c.done)
		c.client.Close()
		c.mu.Lock()
		if c.server != nil {
			c.server.Close()
		}
		c.mu.Unlock()
	})
}

func (p *Proxy) run(c *pair, upstream string) {
	defer p.wg.Done()
	defer func() {
		c.close()
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()
	// A stalled proxy does not even connect upstream: the client sees an
	// accepted connection that never says hello.
	if !p.wait(c) {
		return
	}
	s, err := net.DialTimeout("tcp", upstream, 5*time.Second)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.server = s
	c.mu.Unlock()
	select {
	case <-c.done: // cut while dialing
		s.Close()
		return
	default:
	}
	up := make(chan struct{})
	go func() {
		defer close(up)
		p.pump(c, s, c.client, nil)
	}()
	p.pump(c, c.client, s, &framer{})
	c.close()
	<-up
}

// wait blocks while the proxy is not Up; false when the pair was cut.
func (p *Proxy) wait(c *pair) bool {
	p.mu.Lock()
	open := p.open
	p.mu.Unlock()
	select {
	case <-open:
		return true
	case <-c.done:
		return false
	}
}

// pump copies from src to dst, holding bytes back while stalled and
// corrupting one byte when asked (f tracks packets; nil: never).
func (p *Proxy) pump(c *pair, dst, src net.Conn, f *framer) {
	defer c.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.wait(c) {
				return
			}
			if f != nil {
				p.mu.Lock()
				want := p.corrupt
				p.mu.Unlock()
				if i := f.scan(buf[:n], want); i >= 0 {
					buf[i] ^= 0x5a
					p.corrupted.Add(1)
					p.mu.Lock()
					p.corrupt = 0
					p.mu.Unlock()
				}
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a cut: close both sides
		}
	}
}

// framer follows MySQL protocol packet boundaries (3-byte little-endian
// length, 1-byte sequence, payload) across reads.
type framer struct {
	hdr     [4]byte
	hdrN    int // header bytes seen of the current packet
	size    int // payload size of the current packet
	payload int // payload bytes seen
}

// scan advances over b and returns the index in b of the middle byte of
// the payload of a packet of at least want bytes, or -1 (want 0: never).
func (f *framer) scan(b []byte, want int) int {
	hit := -1
	for i := 0; i < len(b); {
		if f.hdrN < 4 {
			f.hdr[f.hdrN] = b[i]
			f.hdrN++
			i++
			if f.hdrN == 4 {
				f.size = int(f.hdr[0]) | int(f.hdr[1])<<8 | int(f.hdr[2])<<16
				f.payload = 0
				if f.size == 0 {
					f.hdrN = 0
				}
			}
			continue
		}
		n := min(f.size-f.payload, len(b)-i)
		mid := f.size / 2
		if hit < 0 && want > 0 && f.size >= want && f.payload <= mid && mid < f.payload+n {
			hit = i + (mid - f.payload)
		}
		f.payload += n
		i += n
		if f.payload == f.size {
			f.hdrN = 0
		}
	}
	return hit
}
