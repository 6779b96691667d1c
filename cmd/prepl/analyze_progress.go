package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	pbar "github.com/prepl/prepl/progress"
	"github.com/prepl/prepl/txn"
)

// progress draws analyze's progress bar (package progress) on stderr while
// it reads, only when stderr is a terminal (never in logs or pipes). For
// files the bar shows the bytes read of their total; for a live source, the
// transactions read and the position.
type progress struct {
	bar    *pbar.Bar // nil: not a terminal
	start  time.Time
	last   time.Time
	total  int64
	names  []string // base names of the files, in reading order
	before []int64  // bytes of the files before each file
	cur    int      // the file being read
	off    uint32   // the last offset seen in it
}

func newProgress(stderr io.Writer, files []string) *progress {
	p := &progress{start: time.Now()}
	if f, ok := stderr.(*os.File); ok && pbar.IsTerminal(f) && os.Getenv("TERM") != "dumb" {
		unit := pbar.Bytes
		if len(files) == 0 {
			unit = func(n int64) string { return strconv.FormatInt(n, 10) + " txns" }
		}
		p.bar = pbar.NewBar(pbar.NewTerminal(f), "analyze", unit)
	}
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

func (p *progress) update(tx *txn.Txn, n uint64) {
	if p.bar == nil {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	rate := fmt.Sprintf("%.0f txn/s", float64(n)/max(now.Sub(p.start).Seconds(), 1e-9))
	if p.total > 0 {
		p.bar.Update(now, p.fileOffset(tx.End), p.total, fmt.Sprintf("%d txns  %s", n, rate))
		return
	}
	p.bar.Update(now, int64(n), 0, fmt.Sprintf("%s  %s", tx.End, rate))
}

// done clears the bar.
func (p *progress) done() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
