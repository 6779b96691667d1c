package bench

import (
	"fmt"

	"github.com/prepl/prepl/binlog"
)

// gtidDistance is the number of transactions a source binlogged between
// two of its gtid_binlog_pos values: per domain, end seq minus start seq.
func gtidDistance(start, end string) (int, error) {
	a, err := binlog.ParseMariaDBGTIDPos(start)
	if err != nil {
		return 0, err
	}
	b, err := binlog.ParseMariaDBGTIDPos(end)
	if err != nil {
		return 0, err
	}
	n := 0
	for d, seq := range b {
		if seq < a[d] {
			return 0, fmt.Errorf("GTID position went back in domain %d: %s then %s", d, start, end)
		}
		n += int(seq - a[d])
	}
	for d := range a {
		if _, ok := b[d]; !ok {
			return 0, fmt.Errorf("domain %d of %s is missing from %s", d, start, end)
		}
	}
	return n, nil
}
