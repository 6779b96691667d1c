package bench

import (
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	line := "4242 (mariadbd worker) S 1 4242 4242 0 -1 4194560 12345 0 0 0 250 75 0 0 20 0 60 0 1234 8591360320 35121 18446744073709551615"
	got, err := parseStatCPU(line)
	if err != nil || got != 3250*time.Millisecond {
		t.Errorf("parseStatCPU = %v, %v; want 3.25s (325 ticks)", got, err)
	}
	for _, bad := range []string{"", "4242 mariadbd S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 x 75 0"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("parseStatCPU(%q): no error", bad)
		}
	}
}
