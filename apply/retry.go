package apply

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// RetryLost runs f until it succeeds, fails with an error classify does
// not call Connection, or target has been unreachable for timeout, with
// backoff, logging each loss on log: a target lost at any moment of a run
// (at connect, while loading definitions, mid-unit, at commit) is waited
// for the same way. With timeout 0 it runs f once. Targets implement
// their Retry with it. target names the target in the error; it is
// formatted only then (Retry runs for every transaction a unit loads).
func RetryLost(ctx context.Context, what string, target fmt.Stringer, timeout time.Duration, log *slog.Logger, classify func(error) Class, f func() error) error {
	var deadline time.Time
	wait := 100 * time.Millisecond
	for {
		err := f()
		if err == nil || timeout <= 0 || classify(err) != Connection {
			return err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(timeout)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: target %s unreachable for %s: %w", what, target, timeout, err)
		}
		if log != nil {
			log.Warn("target connection lost: retrying", "while", what, "err", err.Error(), "retry_in", wait)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(2*wait, 2*time.Second)
	}
}
