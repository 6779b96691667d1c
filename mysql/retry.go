package mysql

import (
	"context"
	"log/slog"
	"time"

	"github.com/prepl/prepl/apply"
)

// Reconnect makes Open, and every Retry of the target, retry a lost
// connection for up to timeout, with backoff, logging each loss on log.
func Reconnect(timeout time.Duration, log *slog.Logger) Option {
	return func(t *Target) { t.reconnect, t.log = timeout, log }
}

// Retry runs f until it succeeds, fails with an error that is not a lost
// connection (Classify), or the target has been unreachable for the
// Reconnect timeout (apply.RetryLost). Without the Reconnect option it
// runs f once.
func (t *Target) Retry(ctx context.Context, what string, f func() error) error {
	return apply.RetryLost(ctx, what, &t.Endpoint, t.reconnect, t.log, Classify, f)
}
