package run

import (
	"fmt"
	"strings"
	"time"

	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/redact"
)

// The states of prepl status, a Nagios-style check: its first line is the
// verdict, its exit code the state.
const (
	StatusOK       = 0 // positions stored, the live prepl (if asked) running and within --max-lag
	StatusWarning  = 1 // the live prepl failed, cannot read its source or target, or lags past --max-lag
	StatusCritical = 2 // target or live prepl unreachable, or no position stored
)

// StatusNames name the states, as the verdict starts.
var StatusNames = [...]string{"OK", "WARNING", "CRITICAL"}

// StatusError ends a status check that is not OK; Code is the exit code.
type StatusError struct {
	Code int
	msg  string
}

func (e *StatusError) Error() string { return e.msg }

// Health gathers a status check's findings.
type Health struct {
	code     int
	problems []string // what makes it WARNING or CRITICAL
	notes    []string // what is fine, for the OK line
	perf     string   // Nagios performance data
}

// Problem makes the check at least code, saying why.
func (h *Health) Problem(code int, format string, args ...any) {
	h.code = max(h.code, code)
	h.problems = append(h.problems, fmt.Sprintf(format, args...))
}

// Note is what is fine, for the OK line.
func (h *Health) Note(format string, args ...any) {
	h.notes = append(h.notes, fmt.Sprintf(format, args...))
}

// Verdict is the first line: STATE: what, | performance data.
func (h *Health) Verdict() string {
	what := h.problems
	if h.code == StatusOK {
		what = h.notes
	}
	line := StatusNames[h.code] + ": " + strings.Join(what, "; ")
	if h.perf != "" {
		line += " | " + h.perf
	}
	return redact.String(line)
}

// Err is the check's error: nil when OK.
func (h *Health) Err() error {
	if h.code == StatusOK {
		return nil
	}
	return &StatusError{Code: h.code, msg: redact.String(StatusNames[h.code] + ": " + strings.Join(h.problems, "; "))}
}

// JudgeMissing: no stored position is CRITICAL, unless the live prepl
// runs on that channel and has not committed yet (a fresh start on an
// idle source).
func (h *Health) JudgeMissing(missing []string, live *metrics.Status, addr string) {
	for _, ch := range missing {
		starting := live != nil && (ch == "" || live.Channel == ch) && live.State != "failed"
		switch {
		case starting:
			h.Note("channel %q: nothing applied yet by the prepl at %s", live.Channel, addr)
		case ch == "":
			h.Problem(StatusCritical, "no position stored on the target for any channel")
		default:
			h.Problem(StatusCritical, "no position stored for channel %q", ch)
		}
	}
}

// JudgeLive notes what the live status says; live is nil when nothing
// answered at addr.
func (h *Health) JudgeLive(live *metrics.Status, addr string, maxLag time.Duration) {
	if live == nil {
		h.Problem(StatusCritical, "no prepl answers at %s", addr)
		return
	}
	warn := ""
	if maxLag > 0 {
		warn = fmt.Sprintf("%g", maxLag.Seconds())
	}
	h.perf = fmt.Sprintf("lag=%.3fs;%s;;0", live.LagSeconds, warn)
	what := fmt.Sprintf("prepl %s on channel %q", live.Command, live.Channel)
	if live.State == "failed" {
		h.Problem(StatusWarning, "%s failed: %s", what, live.LastError)
	}
	if e := live.SourceEnd; e != nil && e.Error != "" {
		h.Problem(StatusWarning, "%s cannot read the source: %s", what, e.Error)
	}
	reconnecting := 0
	for _, w := range live.WorkerStates {
		if w.State == "reconnecting" {
			reconnecting++
		}
	}
	if reconnecting > 0 {
		h.Problem(StatusWarning, "%s: %d of %d workers reconnecting to the target", what, reconnecting, len(live.WorkerStates))
	}
	if maxLag > 0 && live.LagSeconds > maxLag.Seconds() {
		h.Problem(StatusWarning, "%s lags %.1fs, more than --max-lag %s", what, live.LagSeconds, maxLag)
	}
	h.Note("%s %s, lag %.3fs", what, live.State, live.LagSeconds)
}
