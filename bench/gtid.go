package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// parseGTIDPos reads a MariaDB GTID position ("0-1-100,1-1-7", as in
// gtid_binlog_pos) into the last sequence number of each domain.
func parseGTIDPos(s string) (map[uint32]uint64, error) {
	out := map[uint32]uint64{}
	for _, g := range strings.Split(s, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		parts := strings.Split(g, "-")
		if len(parts) != 3 {
			return nil, fmt.Errorf("GTID %q: want domain-server-seq", g)
		}
		d, err1 := strconv.ParseUint(parts[0], 10, 32)
		_, err2 := strconv.ParseUint(parts[1], 10, 32)
		seq, err3 := strconv.ParseUint(parts[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("GTID %q: want numbers domain-server-seq", g)
		}
		if _, dup := out[uint32(d)]; dup {
			return nil, fmt.Errorf("GTID position %q: domain %d twice", s, d)
		}
		out[uint32(d)] = seq
	}
	return out, nil
}

// gtidDistance is the number of transactions a source binlogged between
// two of its gtid_binlog_pos values: per domain, end seq minus start seq.
func gtidDistance(start, end string) (int, error) {
	a, err := parseGTIDPos(start)
	if err != nil {
		return 0, err
	}
	b, err := parseGTIDPos(end)
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
