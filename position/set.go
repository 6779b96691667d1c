package position

import (
	"sort"
	"strings"

	"github.com/prepl/prepl/txn"
)

// Set is an applied GTID position: MariaDB's keeps the last GTID of each
// domain (gtid_slave_pos form), MySQL's is the executed GTID set. A Set
// holds one flavor: the first GTID or position given decides. The zero
// value is an empty set, ready to use.
type Set struct {
	mariadb map[uint32]MariaGTID
	mysql   MySQLSet // nil: not MySQL
}

// ParseSet parses a MariaDB GTID position or a MySQL GTID set ("" is
// empty).
func ParseSet(s string) (*Set, error) {
	out := &Set{}
	return out, out.Merge(s)
}

// MustParseSet is ParseSet for positions known to be well formed (tests).
func MustParseSet(s string) *Set {
	out, err := ParseSet(s)
	if err != nil {
		panic(err)
	}
	return out
}

// Merge raises s to cover pos too: per MariaDB domain the later GTID, for
// MySQL the union.
func (s *Set) Merge(pos string) error {
	pos = strings.TrimSpace(pos)
	if pos == "" {
		return nil
	}
	if strings.Contains(pos, ":") {
		o, err := ParseMySQLSet(pos)
		if err != nil {
			return err
		}
		s.mysql = s.mysql.Union(o)
		return nil
	}
	for _, part := range strings.Split(pos, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		g, err := ParseMariaGTID(part)
		if err != nil {
			return err
		}
		if cur, ok := s.mariadb[g.Domain]; !ok || g.Seq > cur.Seq {
			s.setMaria(g)
		}
	}
	return nil
}

func (s *Set) setMaria(g MariaGTID) {
	if s.mariadb == nil {
		s.mariadb = map[uint32]MariaGTID{}
	}
	s.mariadb[g.Domain] = g
}

// Add records t as applied (a transaction without a GTID changes nothing).
// MariaDB's position takes t's GTID as its domain's last, as the replica's
// gtid_slave_pos does, whatever it held.
func (s *Set) Add(t *txn.Txn) {
	switch {
	case t.GTID == "":
	case strings.Contains(t.GTID, ":"):
		if key, gno, err := SplitMySQLGTID(t.GTID); err == nil {
			if s.mysql == nil {
				s.mysql = MySQLSet{}
			}
			s.mysql.Add(key, gno)
		}
	default:
		// The GTID's own text: a Txn's ServerID is its event header's.
		g, err := ParseMariaGTID(t.GTID)
		if err != nil {
			g = MariaGTID{Domain: t.Domain, Server: t.ServerID, Seq: t.SeqNo}
		}
		s.setMaria(g)
	}
}

// Contains reports whether the position covers t: for MariaDB a GTID at or
// before its domain's last, for MySQL set membership.
func (s *Set) Contains(t *txn.Txn) bool {
	if t.GTID == "" {
		return false
	}
	if strings.Contains(t.GTID, ":") {
		key, gno, err := SplitMySQLGTID(t.GTID)
		return err == nil && s.mysql.Has(key, gno)
	}
	last, ok := s.mariadb[t.Domain]
	return ok && t.SeqNo <= last.Seq
}

// Covers reports whether s includes o: per MariaDB domain of o a seq_no
// at least o's, or a MySQL superset.
func (s *Set) Covers(o *Set) bool {
	if o.mysql != nil && !s.mysql.Covers(o.mysql) {
		return false
	}
	for d, g := range o.mariadb {
		if have, ok := s.mariadb[d]; !ok || have.Seq < g.Seq {
			return false
		}
	}
	return true
}

// Empty reports whether s holds no GTID.
func (s *Set) Empty() bool { return len(s.mariadb) == 0 && s.mysql.Empty() }

// Clone returns a copy that shares nothing with s.
func (s *Set) Clone() *Set {
	c := &Set{}
	for _, g := range s.mariadb {
		c.setMaria(g)
	}
	if s.mysql != nil {
		c.mysql = s.mysql.Clone()
	}
	return c
}

// String is the position in the server's own form: MariaDB's by domain,
// MySQL's set by uuid.
func (s *Set) String() string {
	if s.mysql != nil && !s.mysql.Empty() {
		return s.mysql.String()
	}
	ds := make([]uint32, 0, len(s.mariadb))
	for d := range s.mariadb {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = s.mariadb[d].String()
	}
	return strings.Join(parts, ",")
}
