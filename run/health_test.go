package run

import (
	"errors"
	"testing"
	"time"

	"github.com/prepl/prepl/metrics"
)

// TestHealth: the verdict is the worst state found, naming the problems
// (or, when OK, what is fine), with the lag as Nagios performance data.
func TestHealth(t *testing.T) {
	running := &metrics.Status{Info: metrics.Info{Command: "replicate", Channel: "default"}, State: "running", LagSeconds: 2.5}
	for _, c := range []struct {
		name    string
		live    *metrics.Status
		missing []string
		maxLag  time.Duration
		code    int
		verdict string
	}{
		{"running, within max lag", running, nil, 10 * time.Second, StatusOK,
			`OK: prepl replicate on channel "default" running, lag 2.500s | lag=2.500s;10;;0`},
		{"lagging", running, nil, time.Second, StatusWarning,
			`WARNING: prepl replicate on channel "default" lags 2.5s, more than --max-lag 1s | lag=2.500s;1;;0`},
		{"nothing answers", nil, nil, 0, StatusCritical, "CRITICAL: no prepl answers at 127.0.0.1:9104"},
		{"failed", &metrics.Status{Info: metrics.Info{Command: "replay", Channel: "replay"}, State: "failed", LastError: "boom"}, nil, 0, StatusWarning,
			`WARNING: prepl replay on channel "replay" failed: boom | lag=0.000s;;;0`},
		{"no position, starting", running, []string{"default"}, 0, StatusOK,
			`OK: prepl replicate on channel "default" running, lag 2.500s; channel "default": nothing applied yet by the prepl at 127.0.0.1:9104 | lag=2.500s;;;0`},
		{"no position on another channel", running, []string{"other"}, 0, StatusCritical,
			`CRITICAL: no position stored for channel "other" | lag=2.500s;;;0`},
	} {
		var h Health
		h.JudgeLive(c.live, "127.0.0.1:9104", c.maxLag)
		h.JudgeMissing(c.missing, c.live, "127.0.0.1:9104")
		var se *StatusError
		err := h.Err()
		code := StatusOK
		if errors.As(err, &se) {
			code = se.Code
		}
		if code != c.code || h.Verdict() != c.verdict || (c.code == StatusOK) != (err == nil) {
			t.Errorf("%s: code %d, verdict %q, err %v; want %d, %q", c.name, code, h.Verdict(), err, c.code, c.verdict)
		}
	}
}
