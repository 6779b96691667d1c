package fault

import (
	"errors"
	"fmt"
	"testing"
)

// retryableWhen is an error type that decides for what it wraps.
type retryableWhen struct {
	err   error
	fatal bool
}

func (e *retryableWhen) Error() string { return e.err.Error() }
func (e *retryableWhen) Unwrap() error { return e.err }
func (e *retryableWhen) Fatal() bool   { return e.fatal }

func TestIsFatal(t *testing.T) {
	errBad := Fatal(errors.New("bad"))
	plain := errors.New("connection refused")
	for _, c := range []struct {
		name  string
		err   error
		fatal bool
	}{
		{"nil", nil, false},
		{"unmarked", plain, false},
		{"marked", errBad, true},
		{"wrapped", fmt.Errorf("apply 0-1-5: %w", errBad), true},
		{"usage", fmt.Errorf("%w: --target is required", ErrUsage), true},
		{"one of two wrapped", fmt.Errorf("%w (%w)", plain, errBad), true},
		{"joined", errors.Join(plain, errBad), true},
		{"a type that says fatal", fmt.Errorf("x: %w", &retryableWhen{plain, true}), true},
		{"an outer type decides for what it wraps", &retryableWhen{errBad, false}, false},
	} {
		if got := IsFatal(c.err); got != c.fatal {
			t.Errorf("%s: IsFatal(%v) = %v, want %v", c.name, c.err, got, c.fatal)
		}
	}
}

// TestFatalIsTransparent: the mark changes neither the message nor what
// errors.Is and errors.As find.
func TestFatalIsTransparent(t *testing.T) {
	inner := &retryableWhen{errors.New("inner"), false}
	err := Fatal(inner)
	if err.Error() != "inner" {
		t.Errorf("message %q, want %q", err.Error(), "inner")
	}
	if !errors.Is(fmt.Errorf("w: %w", err), err) || !errors.Is(err, inner) {
		t.Errorf("errors.Is does not see through the mark")
	}
	var got *retryableWhen
	if !errors.As(err, &got) || got != inner {
		t.Errorf("errors.As does not see through the mark")
	}
	if Fatal(nil) != nil {
		t.Errorf("Fatal(nil) != nil")
	}
}
