package position

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MariaGTID is one MariaDB GTID, domain-server-seq.
type MariaGTID struct {
	Domain, Server uint32
	Seq            uint64
}

func (g MariaGTID) String() string { return fmt.Sprintf("%d-%d-%d", g.Domain, g.Server, g.Seq) }

// ParseMariaGTID parses "domain-server-seq".
func ParseMariaGTID(s string) (MariaGTID, error) {
	f := strings.Split(strings.TrimSpace(s), "-")
	if len(f) != 3 {
		return MariaGTID{}, fmt.Errorf("bad GTID %q: want domain-server-seq (MariaDB) or uuid:n (MySQL)", s)
	}
	d, err1 := strconv.ParseUint(f[0], 10, 32)
	sv, err2 := strconv.ParseUint(f[1], 10, 32)
	q, err3 := strconv.ParseUint(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return MariaGTID{}, fmt.Errorf("bad GTID %q: want domain-server-seq: %w", s, err)
	}
	return MariaGTID{uint32(d), uint32(sv), q}, nil
}

// ParseMariaDBPos parses a MariaDB GTID position ("0-1-100,1-1-5", as in
// gtid_binlog_pos) into the last seq_no of each domain. A domain given
// twice is an error.
func ParseMariaDBPos(s string) (map[uint32]uint64, error) {
	m := map[uint32]uint64{}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		g, err := ParseMariaGTID(part)
		if err != nil {
			return nil, err
		}
		if _, dup := m[g.Domain]; dup {
			return nil, fmt.Errorf("bad MariaDB GTID position %q: domain %d twice", s, g.Domain)
		}
		m[g.Domain] = g.Seq
	}
	return m, nil
}

// Distance is the number of transactions a MariaDB source binlogged
// between two of its gtid_binlog_pos values: per domain, end seq minus
// start seq (seq_nos of one domain are contiguous on one source).
func Distance(start, end string) (int, error) {
	a, err := ParseMariaDBPos(start)
	if err != nil {
		return 0, err
	}
	b, err := ParseMariaDBPos(end)
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

// CoversSeqs reports whether have reaches want in every domain of want
// (positions as ParseMariaDBPos returns them).
func CoversSeqs(have, want map[uint32]uint64) bool {
	for d, n := range want {
		if have[d] < n {
			return false
		}
	}
	return true
}
