package bench

import "testing"

func TestGTIDDistance(t *testing.T) {
	for _, c := range []struct {
		start, end string
		want       int
		err        bool
	}{
		{"0-1-4", "0-1-304", 300, false},
		{"0-1-4", "0-1-4", 0, false},
		{"", "0-1-10", 10, false},
		{"0-1-10,1-1-5", "0-1-20,1-2-7", 12, false}, // per domain; the server id may change
		{"0-1-10", "0-1-20,1-1-3", 13, false},       // a new domain counts from 0
		{"0-1-10,1-1-5", "0-1-20", 0, true},         // a domain vanished
		{"0-1-10", "0-1-9", 0, true},                // went back
		{"0-1", "0-1-9", 0, true},
		{"0-1-x", "0-1-9", 0, true},
		{"0-1-1,0-1-2", "0-1-9", 0, true},
	} {
		got, err := gtidDistance(c.start, c.end)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("gtidDistance(%q, %q) = %d, %v; want %d, error %v", c.start, c.end, got, err, c.want, c.err)
		}
	}
}
