package run

import "testing"

// TestFormatBytes: a size written for a flag's default reads back as the
// same number of bytes, in the unit a user would write.
func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{1 << 30, "1GiB"},
		{4 << 30, "4GiB"},
		{256 << 20, "256MiB"},
		{1536 << 20, "1536MiB"},
		{160 << 20, "160MiB"},
		{4 << 10, "4KiB"},
		{1000, "1000"},
	} {
		got := FormatBytes(c.n)
		if got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
		if back, err := ParseBytes(got); err != nil || back != c.n {
			t.Errorf("ParseBytes(%q) = %d, %v, want %d", got, back, err, c.n)
		}
	}
	if w := DefaultWindow(); w != "24MiB" {
		t.Errorf("DefaultWindow() = %q, want 24MiB (a quarter of %s)", w, DefaultMemoryBudget)
	}
	if _, err := ParseBytes(DefaultMaxTxnSize); err != nil {
		t.Errorf("DefaultMaxTxnSize: %v", err)
	}
}
