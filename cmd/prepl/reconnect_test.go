package main

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// tcpProxy forwards connections to a server and lets the test cut them:
// after cutAfter bytes have come from the server, it closes every
// connection, then turns away the next refuse connections, or every one
// when down is set. With freeze, the connection that crossed cutAfter goes
// silent instead, open but forwarding nothing, as a dead network looks.
type tcpProxy struct {
	ln       net.Listener
	upstream string
	cutAfter int64
	refuse   int32
	down     bool
	freeze   bool

	fromServer atomic.Int64
	cuts       atomic.Int32
	mu         sync.Mutex
	conns      map[net.Conn]bool
	cut        bool
}

func startProxy(t *testing.T, upstream string, cutAfter int64, refuse int32, down bool) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, upstream: upstream, cutAfter: cutAfter, refuse: refuse, down: down, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.closeAll() })
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		turnAway := p.cut && (p.down || p.refuse > 0)
		if turnAway && p.refuse > 0 {
			p.refuse--
		}
		p.mu.Unlock()
		if turnAway {
			c.Close()
			continue
		}
		go p.forward(c)
	}
}

func (p *tcpProxy) forward(client net.Conn) {
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	p.conns[client], p.conns[server] = true, true
	p.mu.Unlock()
	go func() { io.Copy(server, client); server.Close(); client.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 {
			if _, werr := client.Write(buf[:n]); werr != nil {
				break
			}
			if p.fromServer.Add(int64(n)) >= p.cutAfter && p.cutOnce() && p.freeze {
				return // silent from now on; prepl must notice and reconnect
			}
		}
		if err != nil {
			break
		}
	}
	server.Close()
	client.Close()
}

// cutOnce closes every open connection (unless freeze), the first time it
// is called; it reports whether this was the first time.
func (p *tcpProxy) cutOnce() bool {
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		return false
	}
	p.cut = true
	p.mu.Unlock()
	p.cuts.Add(1)
	if !p.freeze {
		p.closeAll()
	}
	return true
}

func (p *tcpProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// binlogBytes is the size of a sandbox's binlog files.
func binlogBytes(t *testing.T, s *sandbox.Server) int64 {
	t.Helper()
	files, err := s.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// TestSourceReconnect cuts every connection between prepl and the source
// a third of the way through the binlog: prepl reconnects (after being
// turned away twice) and finishes with target = source. With the source
// gone for good, it gives up after --source-reconnect-timeout with an
// error that says so, and a rerun straight to the source finishes the job.
func TestSourceReconnect(t *testing.T) {
	t.Parallel()
	src := source(t, func(o *sandbox.Options) { o.CommitWaitCount, o.CommitWaitUsec = 4, 2000 })
	db := sandbox.MustOpen(t, src, "")
	counterWorkload(t, db, 3000, 8)
	size := binlogBytes(t, src)

	t.Run("reconnects", func(t *testing.T) {
		t.Parallel()
		tgt := targetServer(t)
		p := startProxy(t, src.Addr(), size/3, 2, false)
		out := mustPrepl(t, "replicate", "--source", "mysql://root@"+p.addr(), "--target", tgt.URL(), "--workers", "4",
			"--stop-at-end", "--progress", "0", "--source-reconnect-timeout", "1m")
		if p.cuts.Load() != 1 || !strings.Contains(out, "source connection lost") || !strings.Contains(out, "reconnected to source") {
			t.Fatalf("cuts %d; want one cut, then a reconnect in the log:\n%s", p.cuts.Load(), out)
		}
		sameRows(t, src, tgt)
	})
	t.Run("silent-network", func(t *testing.T) {
		t.Parallel()
		tgt := targetServer(t)
		p := startProxy(t, src.Addr(), size/3, 0, false)
		p.freeze = true
		out := mustPrepl(t, "replicate", "--source", "mysql://root@"+p.addr(), "--target", tgt.URL(), "--workers", "4",
			"--stop-at-end", "--progress", "0", "--heartbeat", "200ms", "--source-reconnect-timeout", "1m")
		if p.cuts.Load() != 1 || !strings.Contains(out, "not even a heartbeat") || !strings.Contains(out, "reconnected to source") {
			t.Fatalf("cuts %d; want the silence noticed, then a reconnect in the log:\n%s", p.cuts.Load(), out)
		}
		sameRows(t, src, tgt)
	})
	t.Run("gives-up", func(t *testing.T) {
		t.Parallel()
		tgt := targetServer(t)
		p := startProxy(t, src.Addr(), size/3, 0, true)
		code, out := prepl(t, "replicate", "--source", "mysql://root@"+p.addr(), "--target", tgt.URL(), "--workers", "4",
			"--stop-at-end", "--progress", "0", "--source-reconnect-timeout", "1s")
		if code != 1 || !strings.Contains(out, "unreachable for") || !strings.Contains(out, "resumes from the position stored in the target") {
			t.Fatalf("exit %d; want 1 with a give-up error:\n%s", code, out)
		}
		mustPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--workers", "4", "--stop-at-end", "--progress", "0")
		sameRows(t, src, tgt)
	})
}

// TestPurgedBinlogSaysWhatToDo: a position the source's binlogs no longer
// reach is not retried, and the error says how to recover.
func TestPurgedBinlogSaysWhatToDo(t *testing.T) {
	t.Parallel()
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db, "CREATE DATABASE p", "CREATE TABLE p.t (id INT PRIMARY KEY)", "INSERT INTO p.t VALUES (1)",
		"FLUSH BINARY LOGS", "INSERT INTO p.t VALUES (2)")
	files, err := src.BinlogFiles()
	if err != nil || len(files) < 2 {
		t.Fatalf("binlog files %v: %v", files, err)
	}
	last := filepath.Base(files[len(files)-1])
	// MariaDB keeps a binlog until its InnoDB checkpoint is written: retry.
	waitFor(t, "the purge of the older binlogs", func() bool {
		sandbox.MustExec(t, db, "PURGE BINARY LOGS TO '"+last+"'")
		var first string
		var size any
		db.QueryRow("SHOW BINARY LOGS").Scan(&first, &size)
		return first == last
	})
	tgt := targetServer(t)
	code, out := prepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--start-gtid", "0-1-1",
		"--stop-at-end", "--progress", "0", "--source-reconnect-timeout", "1m")
	if code != 1 || !strings.Contains(out, "1236") || !strings.Contains(out, "re-seed the target") || strings.Contains(out, "reconnecting") {
		t.Fatalf("exit %d; want 1 at once, naming error 1236 and how to recover:\n%s", code, out)
	}
}
