// Package relay keeps a local copy of what a replication stream reads
// from the source (a relay log, as a replica's I/O thread writes one),
// so that reading never waits for applying, and a stopped prepl resumes
// from its copy after the source purged its binlogs.
//
// A Log is a directory of relay files (file.go says their layout). Fill
// appends each transaction read from the source, made durable (fsync) at
// transaction ends, several at once while more are at hand; a Reader
// reads them back to the applier, following the file being written.
// Open repairs a tail a crash cut (it is truncated to the end of the last
// complete transaction) and tells, by the index of where each file starts
// in the source's binlog, whether the Log holds a position: then the
// stream resumes at the Log's end and the applier reads from the Log.
// Files wholly applied are deleted; MaxSize bounds the Log (Fill waits).
package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// Options configure a Log.
type Options struct {
	Dir string
	// MaxSize bounds the bytes of the relay files: at it, Fill waits for
	// files to be applied (0: no bound).
	MaxSize int64
	// MaxAge bounds the age of the oldest relay file held: past it, Fill
	// waits as at MaxSize (0: no bound).
	MaxAge time.Duration
	// FileSize starts a new relay file past it (default 64 MiB).
	FileSize int64
	// ServerID is prepl's own, in its format descriptions.
	ServerID uint32
	Limits   binlog.Limits
	// Skip is the stream's (stream.Config.Skip), for the transactions read
	// back.
	Skip func(gtid string, start txn.Position) bool
	Log  *slog.Logger
}

// segment is one relay file: its sequence number, where it starts in the
// source's binlog, and its size (durable bytes).
type segment struct {
	seq   int
	start txn.Position
	size  int64
	from  int64     // where decoding starts (after prepl's format description)
	gtid  string    // the source's GTID position at start ("": unknown)
	first time.Time // when its first transaction was written (zero: unknown)
}

// Log is a relay log directory. Fill writes it, a Reader reads it; both
// may run at once, in goroutines of their own.
type Log struct {
	opt Options
	log *slog.Logger

	mu      sync.Mutex
	segs    []segment
	end     txn.Position  // the source position of the end of the last durable transaction
	endGTID *position.Set // and the GTID position there (empty: unknown)
	flavor  txn.Flavor
	changed chan struct{} // closed (and replaced) when segs, end or done change
	done    bool
	err     error // why Fill ended (io.EOF: the source's end)
	full    bool  // Fill waits at MaxSize or MaxAge
	applied func() txn.Position

	reset int      // the sequence number of the first file after Reset
	lock  *os.File // holds the directory's lock
	// resetAt is the position applied at Reset: the first file starts
	// there rather than at its first transaction, so that the log holds
	// the position applied when a rotate of the source's binlog lies
	// between the two.
	resetAt txn.Position

	// Fill's own.
	f          *os.File
	fde        []byte
	unsynced   int64
	pendingEnd txn.Position // the end of the last transaction written
	pendGTID   *position.Set
}

// Open opens the relay log in opt.Dir, creating it when needed, and
// truncates its last file after its last complete transaction.
func Open(opt Options) (*Log, error) {
	if opt.FileSize <= 0 {
		opt.FileSize = 64 << 20
	}
	l := &Log{opt: opt, log: opt.Log, changed: make(chan struct{}), applied: func() txn.Position { return txn.Position{} }}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(opt.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("relay log: %w", err)
	}
	lock, err := lockDir(opt.Dir)
	if err != nil {
		return nil, err
	}
	l.lock = lock
	ok := false
	defer func() {
		if !ok {
			lock.Close()
		}
	}()
	seqs, err := listFiles(opt.Dir)
	if err != nil {
		return nil, fmt.Errorf("relay log: %w", err)
	}
	index, err := readIndex(opt.Dir)
	if err != nil {
		return nil, err
	}
	l.endGTID = &position.Set{}
	for i, seq := range seqs {
		p := path(opt.Dir, seq)
		fde, start, from, headEnd, err := readHead(p)
		if err != nil {
			if i == len(seqs)-1 && errors.Is(err, errTorn) {
				// Cut while its head was written: nothing of it was durable.
				l.log.Warn("relay log: removing a file a crash cut in its head", "file", p)
				if err := os.Remove(p); err != nil {
					return nil, fmt.Errorf("relay log: %w", err)
				}
				break
			}
			return nil, fmt.Errorf("%w: delete the files of %s to read again from the source", err, opt.Dir)
		}
		l.fde = fde
		l.flavor = binlog.FlavorOfVersion(fdeVersion(fde))
		sg := segment{seq: seq, start: start, from: from, gtid: index[seq]}
		if fi, err := os.Stat(p); err == nil {
			sg.size, sg.first = fi.Size(), fi.ModTime()
		}
		l.end = start
		if i == len(seqs)-1 {
			if l.endGTID, err = position.ParseSet(sg.gtid); err != nil {
				return nil, fmt.Errorf("relay log: %s: %s: %w", indexName, fileName(seq), err)
			}
			end, endPos, torn, err := scanTail(p, from, headEnd, start, l.flavor, opt.Limits, l.endGTID)
			if err != nil {
				return nil, fmt.Errorf("relay log %s: %w", p, err)
			}
			if torn > 0 {
				l.log.Warn("relay log: truncating what follows the last complete transaction (a crash cut it, or it was not yet durable)",
					"file", p, "at", end, "bytes", torn)
				if err := os.Truncate(p, end); err != nil {
					return nil, fmt.Errorf("relay log: %w", err)
				}
			}
			sg.size, l.end = end, endPos
		}
		l.segs = append(l.segs, sg)
	}
	if err := rewriteIndex(opt.Dir, l.segs); err != nil {
		return nil, err
	}
	l.pendGTID = l.endGTID.Clone()
	ok = true
	return l, nil
}

// lockDir takes dir's lock (an flock of DIR/relay.lock, which a dead
// process lets go of): a relay log has one writer and one reader.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "relay.lock"), os.O_CREATE|os.O_RDWR, 0o640)
	if err != nil {
		return nil, fmt.Errorf("relay log: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("relay log %s is in use by another prepl: give each prepl a --relay-dir of its own", dir)
		}
		return nil, fmt.Errorf("relay log: lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// Close lets the directory go, once Fill has returned and the Reader is
// done with.
func (l *Log) Close() error {
	if l.lock == nil {
		return nil
	}
	err := l.lock.Close()
	l.lock = nil
	return err
}

// fdeVersion is the server version in a format description event.
func fdeVersion(fde []byte) string {
	v := fde[19+2 : 19+2+50]
	for i, c := range v {
		if c == 0 {
			return string(v[:i])
		}
	}
	return string(v)
}

// Holds reports whether the log holds what follows the source position
// p: a file starts at or before it, and its end is at or after it.
func (l *Log) Holds(p txn.Position) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return holds(l.segs, l.end, p)
}

func holds(segs []segment, end, p txn.Position) bool {
	return len(segs) > 0 && p.File != "" && position.Compare(segs[0].start, p) <= 0 && position.Compare(p, end) <= 0
}

// End is the source position the log ends at, and the GTID position
// there ("": unknown): where the stream resumes.
func (l *Log) End() (txn.Position, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end, l.endGTID.String()
}

// Reset deletes every relay file: the log starts again empty, at the
// stream's start, whose GTID position is gtid ("": unknown), after the
// position applied (zero: none).
func (l *Log) Reset(gtid string, applied txn.Position) error {
	g, err := position.ParseSet(gtid)
	if err != nil {
		return fmt.Errorf("relay log: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.segs {
		if err := os.Remove(path(l.opt.Dir, s.seq)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("relay log: %w", err)
		}
	}
	next := 1
	if n := len(l.segs); n > 0 {
		next = l.segs[n-1].seq + 1 // names are not reused, for a reader of the directory
	}
	l.segs = nil
	l.reset, l.resetAt = next, applied
	l.end = txn.Position{}
	l.endGTID, l.pendGTID = g, g.Clone()
	return rewriteIndex(l.opt.Dir, nil)
}

// SetApplied gives the log the applied position, from which files wholly
// applied are deleted.
func (l *Log) SetApplied(f func() txn.Position) { l.applied = f }

// notify wakes the waiting readers; l.mu held.
func (l *Log) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Source is what Fill reads: a stream.Reader with KeepRaw.
type Source interface {
	Next(ctx context.Context) (*txn.Txn, error)
	TakeRaw() [][]byte
	AtHand() bool
	Flavor() txn.Flavor
}

// syncEvery bounds the bytes written and not yet made durable while more
// transactions are at hand.
const syncEvery = 4 << 20

// Fill reads src until it fails or ctx ends, appending each transaction
// to the log. It returns the error that ended it, which the Reader
// returns once it has read all before (io.EOF: the source's end).
func (l *Log) Fill(ctx context.Context, src Source) error {
	l.mu.Lock()
	l.flavor = src.Flavor()
	l.mu.Unlock()
	err := l.fill(ctx, src)
	if serr := l.sync(); err == nil || err == io.EOF {
		if serr != nil {
			err = serr
		}
	}
	if l.f != nil {
		l.f.Close()
	}
	l.mu.Lock()
	l.done, l.err = true, err
	l.notify()
	l.mu.Unlock()
	return err
}

func (l *Log) fill(ctx context.Context, src Source) error {
	for {
		if err := l.waitRoom(ctx); err != nil {
			return err
		}
		t, err := src.Next(ctx)
		if err != nil {
			return err
		}
		if err := l.append(src.TakeRaw(), t); err != nil {
			return err
		}
		if l.unsynced >= syncEvery || !src.AtHand() {
			if err := l.sync(); err != nil {
				return err
			}
		}
	}
}

// append writes the events of t (and those before it) to the current
// file, or to a new one when there is none or it is full.
func (l *Log) append(evs [][]byte, t *txn.Txn) error {
	for _, ev := range evs {
		if len(ev) > 4 && replication.EventType(ev[4]) == replication.FORMAT_DESCRIPTION_EVENT {
			l.fde = ev
		}
	}
	if l.fde == nil {
		return errors.New("relay log: the source sent no format description event before its first transaction")
	}
	for i, ev := range evs {
		if fake, ok := artificialRotate(ev); ok {
			evs[i] = rotateEvent(fake, serverID(ev), crcOn(l.fde))
		}
	}
	l.mu.Lock()
	last := len(l.segs) - 1
	need := l.f == nil || last < 0 || l.segs[last].size >= l.opt.FileSize
	l.mu.Unlock()
	if need {
		if err := l.startFile(t.Start); err != nil {
			return err
		}
	}
	n := 0
	for _, ev := range evs {
		n += len(ev)
	}
	buf := make([]byte, 0, n)
	for _, ev := range evs {
		buf = append(buf, ev...)
	}
	if _, err := l.f.Write(buf); err != nil {
		return fmt.Errorf("relay log %s: %w", l.f.Name(), err)
	}
	l.unsynced += int64(n)
	l.pendingEnd = t.End
	l.pendGTID.Add(t)
	return nil
}

// startFile makes the previous file durable and starts a new one at the
// source position at.
func (l *Log) startFile(at txn.Position) error {
	if err := l.sync(); err != nil {
		return err
	}
	l.mu.Lock()
	seq := l.reset
	if n := len(l.segs); n > 0 {
		seq = l.segs[n-1].seq + 1
	}
	l.mu.Unlock()
	if seq == 0 {
		seq = 1
	}
	if seq == l.reset && l.resetAt.File != "" && position.Compare(l.resetAt, at) < 0 {
		at = l.resetAt
	}
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	gtid := l.pendGTID.String()
	if err := appendIndex(l.opt.Dir, seq, gtid); err != nil {
		return err
	}
	p := path(l.opt.Dir, seq)
	h := head(l.fde, l.opt.ServerID, at)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return fmt.Errorf("relay log: %w", err)
	}
	if _, err := f.Write(h); err != nil {
		f.Close()
		return fmt.Errorf("relay log %s: %w", p, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("relay log %s: %w", p, err)
	}
	if err := syncDir(l.opt.Dir); err != nil {
		f.Close()
		return err
	}
	l.f = f
	l.mu.Lock()
	l.segs = append(l.segs, segment{seq: seq, start: at, size: int64(len(h)), from: 4 + int64(len(ownFDE(l.fde, 0))), first: time.Now(), gtid: gtid})
	if l.end.File == "" {
		l.end = at
	}
	l.notify()
	l.mu.Unlock()
	return nil
}

// sync makes what was written durable and shows it to the readers.
func (l *Log) sync() error {
	if l.f == nil || l.unsynced == 0 {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("relay log %s: fsync: %w", l.f.Name(), err)
	}
	l.mu.Lock()
	l.segs[len(l.segs)-1].size += l.unsynced
	l.end = l.pendingEnd
	l.endGTID = l.pendGTID.Clone()
	l.unsynced = 0
	l.notify()
	l.mu.Unlock()
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("relay log: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("relay log: fsync %s: %w", dir, err)
	}
	return nil
}

// waitRoom deletes the files wholly applied and, while the log is over
// MaxSize, waits for more to be applied.
func (l *Log) waitRoom(ctx context.Context) error {
	for {
		l.purge()
		l.mu.Lock()
		full := l.overBound()
		if full != l.full {
			l.full = full
			if full {
				l.log.Warn("relay log full: reading from the source waits for the applier", "max_size", l.opt.MaxSize, "max_age", l.opt.MaxAge)
			}
		}
		l.mu.Unlock()
		if !full {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// overBound reports whether the log is at its size or age bound; l.mu
// held. The file being written never counts alone.
func (l *Log) overBound() bool {
	if len(l.segs) < 2 {
		return false
	}
	if l.opt.MaxSize > 0 && l.size() >= l.opt.MaxSize {
		return true
	}
	return l.opt.MaxAge > 0 && !l.segs[0].first.IsZero() && time.Since(l.segs[0].first) > l.opt.MaxAge
}

func (l *Log) size() int64 {
	var n int64
	for _, s := range l.segs {
		n += s.size
	}
	return n
}

// purge deletes the files before the one the applied position is in.
func (l *Log) purge() {
	applied := l.applied()
	l.mu.Lock()
	n := purgeable(l.segs, applied)
	gone := l.segs[:n]
	l.segs = l.segs[n:]
	l.mu.Unlock()
	for _, s := range gone {
		if err := os.Remove(path(l.opt.Dir, s.seq)); err != nil && !os.IsNotExist(err) {
			l.log.Warn("relay log: cannot delete an applied file", "err", err.Error())
		}
	}
}

// purgeable is how many of segs' first files are wholly applied: the
// next file starts at or before applied. The last file is never.
func purgeable(segs []segment, applied txn.Position) int {
	if applied.File == "" {
		return 0
	}
	n := 0
	for n+1 < len(segs) && position.Compare(segs[n+1].start, applied) <= 0 {
		n++
	}
	return n
}

// Stats is the log's state, for status and metrics.
type Stats struct {
	Bytes int64
	Files int
	// Oldest is when the oldest file still held was started (zero: none).
	Oldest time.Time
	Full   bool // Fill waits at MaxSize or MaxAge
}

// Dir is the log's directory.
func (l *Log) Dir() string { return l.opt.Dir }

// Stats returns the log's state. It may be called from any goroutine.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := Stats{Bytes: l.size(), Files: len(l.segs), Full: l.full}
	if len(l.segs) > 0 {
		st.Oldest = l.segs[0].first
	}
	return st
}
