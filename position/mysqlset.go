package position

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Interval is a run of MySQL GNOs, both ends included.
type Interval struct{ Lo, Hi uint64 }

// MySQLSet is a MySQL GTID set: per server uuid, sorted disjoint intervals
// that do not touch. The zero value (nil) is the empty set.
type MySQLSet map[string][]Interval

// ParseMySQLSet reads "uuid:1-5:7,uuid2:3" (MySQL's text form). A tag
// (MySQL 8.4 "uuid:tag:1-5") keys its intervals as "uuid:tag".
func ParseMySQLSet(s string) (MySQLSet, error) {
	out := MySQLSet{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, ":")
		key := strings.ToLower(f[0])
		if len(f) < 2 || key == "" {
			return nil, fmt.Errorf("bad GTID set %q: want uuid:n[-m]", part)
		}
		for _, iv := range f[1:] {
			lo, hi, found := strings.Cut(iv, "-")
			a, err := strconv.ParseUint(lo, 10, 64)
			if err != nil {
				key = strings.ToLower(f[0]) + ":" + iv // a tag
				continue
			}
			b := a
			if found {
				if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a {
					return nil, fmt.Errorf("bad GTID interval %q in %q", iv, part)
				}
			}
			out.addInterval(key, Interval{a, b})
		}
	}
	return out, nil
}

// Add puts one GTID in the set.
func (s MySQLSet) Add(uuid string, gno uint64) { s.addInterval(uuid, Interval{gno, gno}) }

func (s MySQLSet) addInterval(uuid string, iv Interval) {
	ivs := s[uuid]
	// The common case: GNOs arrive in ascending order.
	if n := len(ivs); n > 0 && iv.Lo >= ivs[n-1].Lo {
		if iv.Lo <= ivs[n-1].Hi+1 {
			if iv.Hi > ivs[n-1].Hi {
				ivs[n-1].Hi = iv.Hi
			}
			return
		}
		s[uuid] = append(ivs, iv)
		return
	}
	ivs = append(ivs, iv)
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].Lo < ivs[j].Lo })
	merged := ivs[:1]
	for _, x := range ivs[1:] {
		last := &merged[len(merged)-1]
		if x.Lo <= last.Hi+1 {
			if x.Hi > last.Hi {
				last.Hi = x.Hi
			}
			continue
		}
		merged = append(merged, x)
	}
	s[uuid] = merged
}

// Union is s ∪ o, a new set.
func (s MySQLSet) Union(o MySQLSet) MySQLSet {
	out := MySQLSet{}
	for _, x := range []MySQLSet{s, o} {
		for u, ivs := range x {
			for _, iv := range ivs {
				out.addInterval(u, iv)
			}
		}
	}
	return out
}

// Minus is s \ o, a new set.
func (s MySQLSet) Minus(o MySQLSet) MySQLSet {
	out := MySQLSet{}
	for u, ivs := range s {
		for _, iv := range ivs {
			rest := []Interval{iv}
			for _, cut := range o[u] {
				var next []Interval
				for _, r := range rest {
					if cut.Hi < r.Lo || cut.Lo > r.Hi {
						next = append(next, r)
						continue
					}
					if cut.Lo > r.Lo {
						next = append(next, Interval{r.Lo, cut.Lo - 1})
					}
					if cut.Hi < r.Hi {
						next = append(next, Interval{cut.Hi + 1, r.Hi})
					}
				}
				rest = next
			}
			for _, r := range rest {
				out.addInterval(u, r)
			}
		}
	}
	return out
}

// Empty reports whether s holds no GTID.
func (s MySQLSet) Empty() bool {
	for _, ivs := range s {
		if len(ivs) > 0 {
			return false
		}
	}
	return true
}

// Equal reports whether s and o hold the same GTIDs.
func (s MySQLSet) Equal(o MySQLSet) bool { return s.Minus(o).Empty() && o.Minus(s).Empty() }

func (s MySQLSet) String() string {
	us := make([]string, 0, len(s))
	for u, ivs := range s {
		if len(ivs) > 0 {
			us = append(us, u)
		}
	}
	sort.Strings(us)
	parts := make([]string, len(us))
	for i, u := range us {
		var b strings.Builder
		b.WriteString(u)
		for _, iv := range s[u] {
			if iv.Lo == iv.Hi {
				fmt.Fprintf(&b, ":%d", iv.Lo)
			} else {
				fmt.Fprintf(&b, ":%d-%d", iv.Lo, iv.Hi)
			}
		}
		parts[i] = b.String()
	}
	return strings.Join(parts, ",")
}

// Has reports whether GNO gno of key (a server uuid, or "uuid:tag") is in
// the set.
func (s MySQLSet) Has(key string, gno uint64) bool {
	ivs := s[strings.ToLower(key)]
	i := sort.Search(len(ivs), func(i int) bool { return ivs[i].Hi >= gno })
	return i < len(ivs) && ivs[i].Lo <= gno
}

// Covers reports whether s holds every GTID of o.
func (s MySQLSet) Covers(o MySQLSet) bool { return o.Minus(s).Empty() }

// Clone returns a copy of s that shares nothing with it.
func (s MySQLSet) Clone() MySQLSet {
	out := make(MySQLSet, len(s))
	for u, ivs := range s {
		out[u] = append([]Interval(nil), ivs...)
	}
	return out
}

// SplitMySQLGTID splits one MySQL GTID "uuid:n" (or "uuid:tag:n") into the
// set's key and its GNO.
func SplitMySQLGTID(g string) (key string, gno uint64, err error) {
	i := strings.LastIndexByte(g, ':')
	if i <= 0 {
		return "", 0, fmt.Errorf("bad MySQL GTID %q: want uuid:n", g)
	}
	gno, err = strconv.ParseUint(g[i+1:], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("bad MySQL GTID %q: want uuid:n", g)
	}
	return strings.ToLower(g[:i]), gno, nil
}
