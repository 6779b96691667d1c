// Package progress draws a one-line progress bar with rate and ETA at the
// bottom of a terminal. Log lines written through the same Terminal clear
// the bar, print, and draw it again, so the two never mix.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Terminal serializes log output and the bar on one terminal.
type Terminal struct {
	mu    sync.Mutex
	w     io.Writer
	f     *os.File // for the width; nil when unknown
	line  string   // the bar as drawn, "" when none
	width int
}

// NewTerminal wraps w, a terminal (see IsTerminal).
func NewTerminal(w io.Writer) *Terminal {
	t := &Terminal{w: w}
	if f, ok := w.(*os.File); ok {
		t.f = f
	}
	return t
}

const clearLine = "\r\x1b[K"

// Write prints log output above the bar.
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.line == "" {
		return t.w.Write(p)
	}
	io.WriteString(t.w, clearLine)
	n, err := t.w.Write(p)
	io.WriteString(t.w, t.line)
	return n, err
}

// draw replaces the bar with line ("" removes it).
func (t *Terminal) draw(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f != nil {
		if w := width(t.f); w > 0 {
			t.width = w
		}
	}
	if t.width > 1 && len([]rune(line)) >= t.width {
		line = string([]rune(line)[:t.width-1])
	}
	if line == t.line {
		return
	}
	io.WriteString(t.w, clearLine+line)
	t.line = line
}

// Bar is one progress bar on a Terminal.
type Bar struct {
	t       *Terminal
	label   string
	samples []sample // recent (time, done), for the rate
	unit    func(int64) string
}

type sample struct {
	at   time.Time
	done int64
}

// rateWindow is the span the rate and ETA are measured over.
const rateWindow = 10 * time.Second

// NewBar starts a bar labelled label; quantities are shown with unit
// (nil: Bytes).
func NewBar(t *Terminal, label string, unit func(int64) string) *Bar {
	if unit == nil {
		unit = Bytes
	}
	return &Bar{t: t, label: label, unit: unit}
}

// Update redraws the bar: done of total (total <= 0: unknown), then note
// (e.g. "1520 txn/s  lag 0.2s").
func (b *Bar) Update(now time.Time, done, total int64, note string) {
	b.samples = append(b.samples, sample{now, done})
	for len(b.samples) > 2 && now.Sub(b.samples[1].at) >= rateWindow {
		b.samples = b.samples[1:]
	}
	b.t.draw(b.Line(done, total, note))
}

// Line renders the bar without drawing it.
func (b *Bar) Line(done, total int64, note string) string {
	var s strings.Builder
	s.WriteString(b.label)
	s.WriteByte(' ')
	if total > 0 {
		frac := min(max(float64(done)/float64(total), 0), 1)
		const cells = 24
		full := int(frac * cells)
		s.WriteByte('[')
		s.WriteString(strings.Repeat("=", full))
		if full < cells {
			s.WriteByte('>')
			s.WriteString(strings.Repeat(" ", cells-full-1))
		}
		fmt.Fprintf(&s, "] %5.1f%%  %s/%s", 100*frac, b.unit(done), b.unit(total))
	} else {
		s.WriteString(b.unit(done))
	}
	if note != "" {
		s.WriteString("  ")
		s.WriteString(note)
	}
	if total > 0 {
		s.WriteString("  ETA ")
		s.WriteString(b.eta(done, total))
	}
	return s.String()
}

// eta is the time left at the recent rate: "--" when nothing moved.
func (b *Bar) eta(done, total int64) string {
	if len(b.samples) < 2 {
		return "--"
	}
	a, z := b.samples[0], b.samples[len(b.samples)-1]
	dt := z.at.Sub(a.at).Seconds()
	if dt <= 0 || z.done <= a.done {
		return "--"
	}
	left := time.Duration(float64(total-done) / (float64(z.done-a.done) / dt) * float64(time.Second))
	return Duration(left)
}

// Finish removes the bar.
func (b *Bar) Finish() { b.t.draw("") }

// Duration formats d as h:mm:ss or m:ss.
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d/time.Minute)%60, int(d/time.Second)%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// Bytes formats n as B, KiB, MiB or GiB.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
