package apply

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/prepl/prepl/txn"
)

// gtidState is the applied GTID position as transactions are admitted in
// stream order: MariaDB keeps the last GTID per domain (gtid_slave_pos
// form), MySQL the executed GTID set.
type gtidState struct {
	mariadb map[uint32]string
	mysql   *gomysql.MysqlGTIDSet
}

func newGTIDState(pos string) (*gtidState, error) {
	s := &gtidState{mariadb: map[uint32]string{}}
	pos = strings.TrimSpace(pos)
	if pos == "" {
		return s, nil
	}
	if strings.Contains(pos, ":") {
		set, err := gomysql.ParseMysqlGTIDSet(pos)
		if err != nil {
			return nil, fmt.Errorf("bad MySQL GTID set %q: %w", pos, err)
		}
		s.mysql = set.(*gomysql.MysqlGTIDSet)
		return s, nil
	}
	for _, g := range strings.Split(pos, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		d, _, _, err := ParseMariaDBGTID(g)
		if err != nil {
			return nil, err
		}
		s.mariadb[d] = g
	}
	return s, nil
}

// ParseMariaDBGTID splits "domain-server-seq".
func ParseMariaDBGTID(g string) (domain, server uint32, seq uint64, err error) {
	p := strings.Split(strings.TrimSpace(g), "-")
	if len(p) != 3 {
		return 0, 0, 0, fmt.Errorf("bad GTID %q: want domain-server-seq (MariaDB) or uuid:n (MySQL)", g)
	}
	d, err1 := strconv.ParseUint(p[0], 10, 32)
	sv, err2 := strconv.ParseUint(p[1], 10, 32)
	sq, err3 := strconv.ParseUint(p[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, 0, 0, fmt.Errorf("bad GTID %q: want domain-server-seq", g)
	}
	return uint32(d), uint32(sv), sq, nil
}

func (s *gtidState) add(t *txn.Txn) {
	if t.GTID == "" {
		return
	}
	if strings.Contains(t.GTID, ":") {
		if s.mysql == nil {
			set, _ := gomysql.ParseMysqlGTIDSet("")
			s.mysql = set.(*gomysql.MysqlGTIDSet)
		}
		s.mysql.Update(t.GTID)
		return
	}
	s.mariadb[t.Domain] = t.GTID
}

func (s *gtidState) String() string {
	if s.mysql != nil {
		return s.mysql.String()
	}
	ds := make([]uint32, 0, len(s.mariadb))
	for d := range s.mariadb {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = s.mariadb[d]
	}
	return strings.Join(parts, ",")
}

// Contains reports whether the GTID position already covers gtid: for
// MariaDB, a GTID at or before the domain's last one; for MySQL, set
// membership.
func (s *gtidState) Contains(t *txn.Txn) bool {
	if t.GTID == "" {
		return false
	}
	if s.mysql != nil {
		one, err := gomysql.ParseMysqlGTIDSet(t.GTID)
		return err == nil && s.mysql.Contain(one)
	}
	last, ok := s.mariadb[t.Domain]
	if !ok {
		return false
	}
	_, _, seq, err := ParseMariaDBGTID(last)
	return err == nil && t.SeqNo <= seq
}

// PositionLess orders binlog positions: by the file's numeric extension
// (binlog.000009 < binlog.000010), then by offset.
func PositionLess(fileA string, posA uint32, fileB string, posB uint32) bool {
	if fileA != fileB {
		na, ea := fileSeq(fileA)
		nb, eb := fileSeq(fileB)
		if ea == nil && eb == nil && na != nb {
			return na < nb
		}
		return fileA < fileB
	}
	return posA < posB
}

func fileSeq(f string) (uint64, error) {
	i := strings.LastIndexByte(f, '.')
	return strconv.ParseUint(f[i+1:], 10, 64)
}

// GTIDPosition is a GTID position given by the user (--start-gtid).
type GTIDPosition = gtidState

// ParseGTIDPosition parses a MariaDB gtid_slave_pos or a MySQL GTID set.
func ParseGTIDPosition(s string) (*GTIDPosition, error) { return newGTIDState(s) }
