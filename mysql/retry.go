package mysql

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Reconnect makes Open, and every Retry of the target, retry a lost
// connection for up to timeout, with backoff, logging each loss on log.
func Reconnect(timeout time.Duration, log *slog.Logger) Option {
	return func(t *Target) { t.reconnect, t.log = timeout, log }
}

// Retry runs f until it succeeds, fails with an error that is not a lost
// connection (Classify), or the target has been unreachable for the
// Reconnect timeout: a target lost at any moment of a run (at connect,
// while loading table definitions, mid-unit, at commit) is waited for the
// same way. Without the Reconnect option it runs f once.
func (t *Target) Retry(ctx context.Context, what string, f func() error) error {
	var deadline time.Time
	wait := 100 * time.Millisecond
	for {
		err := f()
		if err == nil || t.reconnect <= 0 || Classify(err) != Connection {
			return err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(t.reconnect)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: target %s unreachable for %s: %w", what, t.Endpoint, t.reconnect, err)
		}
		if t.log != nil {
			t.log.Warn("target connection lost: retrying", "while", what, "err", err.Error(), "retry_in", wait)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(2*wait, 2*time.Second)
	}
}
