package snapshot

import "testing"

func TestPartCount(t *testing.T) {
	for _, tc := range []struct {
		rows, total, workers, chunk, want int64
	}{
		{100000, 800000, 4, 5000, 1}, // 8 tables alike: one part each
		{30000, 30000, 4, 50, 4},     // one table: cut for every worker
		{600000, 800000, 4, 5000, 3}, // most of the data: 3 shares of 200,000
		{50000, 100000, 4, 5000, 2},  // half of it
		{9000, 9000, 4, 5000, 1},     // fewer chunks than workers
		{0, 0, 4, 5000, 0},           // empty
		{1000, 1000, 8, 100, 8},      // shares of 125 rows
		{100000, 100001, 4, 1000, 4}, // all but one row
		{20, 61, 3, 2, 1},            // share of 20: exactly one
		{46, 61, 3, 2, 3},            // TestMySQLCopyExact's x.v
		{1, 3, 4, 1, 1},              // total below the workers: no share
	} {
		if got := partCount(tc.rows, tc.total, tc.workers, tc.chunk); got != tc.want {
			t.Errorf("partCount(%d rows of %d, %d workers, chunks of %d) = %d, want %d", tc.rows, tc.total, tc.workers, tc.chunk, got, tc.want)
		}
	}
}
