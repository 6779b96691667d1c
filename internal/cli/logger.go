package cli

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/prepl/prepl/redact"
)

// Logger makes the log of --log-format (text or json) and --log-level
// (debug, info, warn, error) on w, with secrets redacted, and makes it
// slog's default.
func Logger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", ErrUsage, level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("%w: --log-format %q: want text or json", ErrUsage, format)
	}
	l := slog.New(redact.Handler(h))
	slog.SetDefault(l)
	return l, nil
}
