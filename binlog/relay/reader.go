package relay

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/internal/readahead"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// Reader reads the transactions of a Log after a source position, as a
// binlog.Reader, following the file Fill writes: it waits for Fill at
// the log's end, and returns Fill's error (io.EOF at the source's end)
// once everything before it is read.
type Reader struct {
	l     *Log
	after txn.Position
	// Silence, when set, is the stream's (the source's silence).
	silence func() time.Duration

	seq   int // the file being read (0: none yet)
	f     *os.File
	er    *eventReader
	ev    *events
	limit int64  // durable bytes of the file as last looked at
	n     uint64 // transactions returned: their Seq
	err   error
}

var _ binlog.Reader = (*Reader)(nil)

// Reader reads the log's transactions that end after the source
// position after (all, when after is zero).
func (l *Log) Reader(after txn.Position, silence func() time.Duration) *Reader {
	return &Reader{l: l, after: after, silence: silence}
}

// Flavor is the source's.
func (r *Reader) Flavor() txn.Flavor {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	return r.l.flavor
}

// ReadAhead is nil: the engine reads ahead through a read-ahead of its own.
func (r *Reader) ReadAhead() *readahead.Reader { return nil }

// AtHand reports whether durable bytes wait unread in the current file:
// they hold whole transactions.
func (r *Reader) AtHand() bool { return r.er != nil && r.er.off < r.limit }

// Silence is the source's, as the stream sees it.
func (r *Reader) Silence() time.Duration {
	if r.silence == nil {
		return 0
	}
	return r.silence()
}

// Close closes the file being read.
func (r *Reader) Close() error {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	if r.err == nil {
		r.err = binlog.ErrClosed
	}
	return nil
}

// Next returns the next transaction.
func (r *Reader) Next(ctx context.Context) (*txn.Txn, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		if r.er != nil && r.er.off < r.limit {
			at := r.er.off
			raw, err := r.er.next()
			if err == nil {
				var t *txn.Txn
				if t, err = r.ev.add(raw); err == nil {
					if t == nil || (r.after.File != "" && position.Compare(t.End, r.after) <= 0) {
						continue
					}
					r.n++
					t.Seq = r.n // the transactions skipped are not the stream's
					return t, nil
				}
			}
			r.err = fmt.Errorf("relay log %s: event at offset %d: %w (the relay file is damaged: stop prepl, delete the files of "+
				"--relay-dir and start it again to read from the source)", path(r.l.opt.Dir, r.seq), at, err)
			return nil, r.err
		}
		wait, err := r.advance()
		if err != nil {
			r.err = err
			return nil, err
		}
		if wait == nil {
			continue
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// advance looks at the log: more of the current file, the next file, or
// the end (Fill's error when it ended, else a channel to wait on).
func (r *Reader) advance() (wait <-chan struct{}, err error) {
	l := r.l
	l.mu.Lock()
	i := r.index()
	if i >= 0 && r.f != nil {
		if l.segs[i].size > r.limit {
			r.limit = l.segs[i].size
			l.mu.Unlock()
			return nil, nil
		}
		i++ // the current file is read whole
	} else if i < 0 {
		i = r.first()
	}
	if i >= 0 && i < len(l.segs) && l.segs[i].size > 0 {
		sg := l.segs[i]
		l.mu.Unlock()
		return nil, r.open(sg)
	}
	wait, done, ferr := l.changed, l.done, l.err
	l.mu.Unlock()
	if done {
		if ferr == nil {
			ferr = io.EOF
		}
		return nil, ferr
	}
	return wait, nil
}

// index is the current file's index in segs (-1: none); l.mu held.
func (r *Reader) index() int {
	for i, s := range r.l.segs {
		if s.seq == r.seq {
			return i
		}
	}
	return -1
}

// first is the index of the file to start reading at: the last that
// starts at or before after (0 when none does); l.mu held.
func (r *Reader) first() int {
	segs := r.l.segs
	if len(segs) == 0 {
		return -1
	}
	if r.seq != 0 { // the file read was deleted: go on at the next
		for i, s := range segs {
			if s.seq > r.seq {
				return i
			}
		}
		return -1
	}
	i := 0
	for r.after.File != "" && i+1 < len(segs) && position.Compare(segs[i+1].start, r.after) <= 0 {
		i++
	}
	return i
}

// open starts reading sg after its head.
func (r *Reader) open(sg segment) error {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	p := path(r.l.opt.Dir, sg.seq)
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("relay log: %w", err)
	}
	if _, err := f.Seek(sg.from, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("relay log: %w", err)
	}
	r.f, r.seq, r.limit = f, sg.seq, sg.size
	r.er = newEventReader(f, sg.from)
	if r.ev == nil {
		flavor := r.Flavor()
		dec := binlog.NewDecoder(r.l.opt.Limits, r.l.opt.Skip)
		dec.SetFlavor(flavor)
		r.ev = &events{dec: dec, flavor: flavor}
	}
	r.ev.dec.Restart() // a file starts with a format description, as a connection
	return nil
}
