// Package sourceend tells how far a binlog source has written, for
// progress, lag in bytes and whether a run has caught up: a live source
// polled over an ordinary connection (Poller), or the end of the binlog
// files a replay reads (Files).
package sourceend

import (
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/internal/srcpos"
	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/position"
)

// End tells how far the source has written.
type End interface {
	// End is the source's end as last seen; false when not known yet.
	End() (metrics.SourceEnd, bool)
	// Offset places a binlog position on one axis of bytes (the files in
	// order, end to end); false when a file's size is unknown.
	Offset(file string, pos uint32) (int64, bool)
	// CaughtUp reports whether a run with stats has applied everything up
	// to the end last seen, that end having been seen after readAt, when
	// the last transaction was read.
	CaughtUp(s apply.Stats, readAt time.Time) bool
}

// Files is the end of the binlog files a replay reads.
type Files struct {
	names  []string // base names, in the order given
	starts []int64  // offset of each file's start on the byte axis
	total  int64
}

// NewFiles returns the end of the files at paths, read in that order.
func NewFiles(paths []string) *Files {
	f := &Files{}
	for _, p := range paths {
		f.names = append(f.names, filepath.Base(p))
		f.starts = append(f.starts, f.total)
		if fi, err := os.Stat(p); err == nil {
			f.total += fi.Size()
		}
	}
	return f
}

// End is the end of the last file.
func (f *Files) End() (metrics.SourceEnd, bool) {
	if len(f.names) == 0 {
		return metrics.SourceEnd{}, false
	}
	last := len(f.names) - 1
	return metrics.SourceEnd{File: f.names[last], Pos: uint32(f.total - f.starts[last])}, true
}

// Offset places file:pos on the files end to end.
func (f *Files) Offset(file string, pos uint32) (int64, bool) {
	for i, n := range f.names {
		if n == file {
			return f.starts[i] + int64(pos), true
		}
	}
	return 0, false
}

// CaughtUp: a replay is caught up when it is done (its caller says so).
func (f *Files) CaughtUp(apply.Stats, time.Time) bool { return false }

// Poller asks a live source how far it has written, every PollEvery,
// over an ordinary connection (SHOW MASTER STATUS, SHOW BINARY LOGS and
// the GTID position: REPLICATION CLIENT / BINLOG MONITOR).
type Poller struct {
	db  *sql.DB
	log *slog.Logger

	mu      sync.Mutex
	last    metrics.SourceEnd
	known   bool
	sizes   map[string]int64 // SHOW BINARY LOGS
	order   []string
	mariadb bool
	warned  bool

	cancel context.CancelFunc
	done   chan struct{}
}

// PollEvery is how often a Poller asks.
const PollEvery = time.Second

// StartPoller polls db once, then every PollEvery until Stop; a failed
// poll is warned about on log once, until one succeeds.
func StartPoller(db *sql.DB, log *slog.Logger) *Poller {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Poller{db: db, log: log, cancel: cancel, done: make(chan struct{})}
	p.poll(ctx)
	go func() {
		defer close(p.done)
		t := time.NewTicker(PollEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.poll(ctx)
			}
		}
	}()
	return p
}

// Stop ends polling and waits for the poller's goroutine.
func (p *Poller) Stop() {
	p.cancel()
	<-p.done
}

func (p *Poller) poll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	end, sizes, order, mariadb, err := querySourceEnd(ctx, p.db)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil && !p.warned {
			p.log.Warn("cannot read the source's binlog position (for lag in bytes and caught-up); retrying", "err", err)
			p.warned = true
		}
		p.last.Error = err.Error()
		return
	}
	p.last, p.known, p.sizes, p.order, p.mariadb, p.warned = end, true, sizes, order, mariadb, false
}

// querySourceEnd reads the source's end, its binlog files' sizes in order,
// and whether it is MariaDB.
func querySourceEnd(ctx context.Context, db *sql.DB) (end metrics.SourceEnd, sizes map[string]int64, order []string, mariadb bool, err error) {
	end.CheckedAt = time.Now().UTC()
	if mariadb, err = srcpos.IsMariaDB(ctx, db); err != nil {
		return end, nil, nil, false, err
	}
	if end.File, end.Pos, err = srcpos.FilePos(ctx, db); err != nil {
		return end, nil, nil, mariadb, err
	}
	if g, err := srcpos.GTIDs(ctx, db, mariadb); err == nil {
		end.GTIDPos = g
	}
	rows, err := db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return end, nil, nil, mariadb, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	sizes = map[string]int64{}
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return end, nil, nil, mariadb, err
		}
		n, _ := strconv.ParseInt(string(vals[1]), 10, 64)
		sizes[string(vals[0])] = n
		order = append(order, string(vals[0]))
	}
	return end, sizes, order, mariadb, rows.Err()
}

// End is the end the last successful poll saw (with the last poll's
// error, if it failed).
func (p *Poller) End() (metrics.SourceEnd, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last, p.known
}

// Offset places file:pos on the source's binlog files end to end.
func (p *Poller) Offset(file string, pos uint32) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var at int64
	for _, n := range p.order {
		if n == file {
			return at + int64(pos), true
		}
		at += p.sizes[n]
	}
	return 0, false
}

// CaughtUp: nothing in flight, the last poll succeeded after the last
// transaction was read (an older one may predate writes read since), and
// either the applied GTID position covers the source's (which sees past a
// rotation with nothing after it) or reading reached the source's file and
// offset (which sees past trailing transactions that were skipped).
func (p *Poller) CaughtUp(s apply.Stats, readAt time.Time) bool {
	p.mu.Lock()
	end, ok, mariadb := p.last, p.known, p.mariadb
	p.mu.Unlock()
	if !ok || end.Error != "" || s.InFlight > 0 || !end.CheckedAt.After(readAt) {
		return false
	}
	if mariadb && end.GTIDPos == "" {
		return true // every MariaDB transaction has a GTID: none was written
	}
	if GTIDCovers(s.Last.GTIDPos, end.GTIDPos) {
		return true
	}
	read := ReadPosition(s)
	return read.File == end.File && read.Pos >= end.Pos
}

// GTIDCovers reports whether GTID position have includes want: per MariaDB
// domain a sequence number at least want's, or a MySQL GTID superset.
func GTIDCovers(have, want string) bool {
	if want == "" {
		return false // a source without GTIDs: decide by position
	}
	h, err1 := position.ParseSet(have)
	w, err2 := position.ParseSet(want)
	return err1 == nil && err2 == nil && h.Covers(w)
}

// ReadPosition is where reading stands: the last transaction read, or
// the resumed position before anything was read.
func ReadPosition(s apply.Stats) position.Checkpoint {
	if s.ReadPos.File != "" {
		return s.ReadPos
	}
	return s.Last
}
