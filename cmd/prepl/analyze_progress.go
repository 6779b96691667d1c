package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prepl/prepl/txn"
)

// progress draws a one-line progress bar on stderr while analyze reads,
// only when stderr is a terminal (never in logs or pipes). For files the
// bar shows the bytes read of their total; for a live source, the
// transactions read and the position.
type progress struct {
	w      io.Writer
	on     bool
	start  time.Time
	last   time.Time
	total  int64
	names  []string // base names of the files, in reading order
	before []int64  // bytes of the files before each file
	cur    int      // the file being read
	off    uint32   // the last offset seen in it
	drawn  bool
}

func newProgress(stderr io.Writer, files []string) *progress {
	p := &progress{w: stderr, on: isTerminal(stderr), start: time.Now()}
	for _, f := range files {
		var size int64
		if st, err := os.Stat(f); err == nil {
			size = st.Size()
		}
		p.names = append(p.names, filepath.Base(f))
		p.before = append(p.before, p.total)
		p.total += size
	}
	return p
}

// fileOffset is how many bytes of all the files precede position pos.
// Transactions come in file order; a new name, or an offset going back
// (the same file given twice), is the next file.
func (p *progress) fileOffset(pos txn.Position) int64 {
	if p.names[p.cur] != pos.File || pos.Offset < p.off {
		for j := p.cur + 1; j < len(p.names); j++ {
			if p.names[j] == pos.File {
				p.cur = j
				break
			}
		}
	}
	p.off = pos.Offset
	return p.before[p.cur] + int64(pos.Offset)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) update(tx *txn.Txn, n uint64) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	el := now.Sub(p.start).Seconds()
	rate := float64(n) / max(el, 1e-9)
	if p.total > 0 {
		done := p.fileOffset(tx.End)
		frac := min(float64(done)/float64(p.total), 1)
		const width = 30
		bar := strings.Repeat("=", int(frac*width)) + strings.Repeat(" ", width-int(frac*width))
		eta := "-"
		if frac > 0 {
			eta = time.Duration(el * (1 - frac) / frac * float64(time.Second)).Round(time.Second).String()
		}
		fmt.Fprintf(p.w, "\r[%s] %3.0f%%  %s / %s  %d txns  %.0f txn/s  ETA %s \x1b[K",
			bar, 100*frac, human(done), human(p.total), n, rate, eta)
	} else {
		fmt.Fprintf(p.w, "\r%d txns  %s  %.0f txn/s \x1b[K", n, tx.End, rate)
	}
	p.drawn = true
}

// done clears the bar.
func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

func human(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
}
