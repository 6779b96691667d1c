package run

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/apply"
)

func TestRetryStormWarnsOncePerQuietPeriod(t *testing.T) {
	cases := []struct {
		name             string
		retries, applied uint64 // per second
		want             int    // warnings over 70 s
	}{
		{"storm", 20, 5, 2},               // 200 retries in 10 s, more than applied: warned, again after a minute
		{"busy but healthy", 20, 1000, 0}, // many retries, many more applied
		{"few retries", 5, 0, 0},          // 50 in 10 s: below the threshold
	}
	for _, c := range cases {
		var buf bytes.Buffer
		w := &watch{log: slog.New(slog.NewTextHandler(&buf, nil))}
		t0 := time.Now()
		for i := uint64(0); i <= 70; i++ {
			w.retryStorm(t0.Add(time.Duration(i)*time.Second), apply.Stats{Retries: c.retries * i, Txns: c.applied * i})
		}
		if got := strings.Count(buf.String(), "retry storm"); got != c.want {
			t.Errorf("%s: %d warnings, want %d:\n%s", c.name, got, c.want, buf.String())
		}
	}
}
