package fileset

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// maria is a MariaDB file summary: its Gtid_list (start) and the GTIDs it
// holds, as "d-s-a..b" runs.
func maria(t *testing.T, name, start string, runs ...string) FileSummary {
	t.Helper()
	st, err := ParseMariaDBState(start)
	if err != nil {
		t.Fatal(err)
	}
	f := FileSummary{Name: name, Flavor: txn.MariaDB, HasGTIDList: true, MariaDBStart: st, MariaDBEnd: st.clone(),
		MariaDBFirst: map[uint32]position.MariaGTID{}}
	for _, r := range runs {
		var d, s uint32
		var a, b uint64
		if _, err := fmt.Sscanf(r, "%d-%d-%d..%d", &d, &s, &a, &b); err != nil {
			t.Fatalf("run %q: %v", r, err)
		}
		for q := a; q <= b; q++ {
			g := position.MariaGTID{Domain: d, Server: s, Seq: q}
			f.MariaDBEnd.add(g)
			if _, ok := f.MariaDBFirst[d]; !ok {
				f.MariaDBFirst[d] = g
			}
		}
	}
	return f
}

// relay makes f a relay log's summary: no GTID list of its own.
func relay(f FileSummary) FileSummary {
	f.Relay, f.HasGTIDList = true, false
	return f
}

const u1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"

func mysqlFile(t *testing.T, name, start, held string) FileSummary {
	t.Helper()
	s, err := position.ParseMySQLSet(start)
	if err != nil {
		t.Fatal(err)
	}
	h, err := position.ParseMySQLSet(held)
	if err != nil {
		t.Fatal(err)
	}
	return FileSummary{Name: name, Flavor: txn.MySQL, HasGTIDList: true, MySQLStart: s, MySQLHeld: h}
}

func plain(name, rotate string) FileSummary {
	return FileSummary{Name: name, Flavor: txn.MySQL, HasGTIDList: true, Anonymous: 10, Rotate: rotate}
}

func TestCheckContinuity(t *testing.T) {
	m1 := maria(t, "binlog.000001", "", "0-1-1..57")
	m2 := maria(t, "binlog.000002", "0-1-57", "0-1-58..119")
	m3 := maria(t, "binlog.000003", "0-1-119", "0-1-120..150")
	damaged := m1
	damaged.Damaged = fmt.Errorf("truncated")
	my1 := mysqlFile(t, "mysql-bin.000001", "", u1+":1-57")
	my2 := mysqlFile(t, "mysql-bin.000002", u1+":1-57", u1+":58-119")
	my3 := mysqlFile(t, "mysql-bin.000003", u1+":1-119", u1+":120-150")
	renamed := func(f FileSummary, name string) FileSummary { f.Name = name; return f }
	cases := []struct {
		name  string
		files []FileSummary
		kind  ProblemKind // of the first problem
		want  []string    // substrings of the first problem; none: no problem
	}{
		{"mariadb complete", []FileSummary{m1, m2, m3}, 0, nil},
		{"mariadb one file", []FileSummary{m2}, 0, nil},
		{"mariadb gap", []FileSummary{m1, m3}, Gap, []string{
			"binlog.000003 starts at 0-1-120 but binlog.000001 ends at 0-1-57: 0-1-58..0-1-119 are missing (binlog.000002 is missing?)"}},
		{"mariadb file cut short", []FileSummary{maria(t, "binlog.000001", "", "0-1-1..40"), m2}, Gap, []string{
			"0-1-41..0-1-57 are missing (binlog.000001 does not end with a rotate event: is it cut short?)"}},
		{"mariadb gap of one", []FileSummary{m1, maria(t, "binlog.000002", "0-1-58", "0-1-59..60")}, Gap, []string{"0-1-58 is missing"}},
		{"mariadb file twice", []FileSummary{m1, m2, m1}, Repeat, []string{"binlog.000001 is given twice (file 1 and file 3)"}},
		{"mariadb copy under another name", []FileSummary{m1, renamed(m1, "copy.000002")}, Repeat, []string{"start at the same GTID position"}},
		{"mariadb wrong order", []FileSummary{m2, m1, m3}, Order, []string{"binlog.000001 is given after binlog.000002",
			"binlog.000001 binlog.000002 binlog.000003"}},
		{"mariadb wrong order, names say nothing", []FileSummary{renamed(m2, "b"), renamed(m1, "a")}, Order, []string{"a starts at 0-1-1, before b does"}},
		{"mariadb overlap", []FileSummary{m2, maria(t, "binlog.000003", "0-1-100", "0-1-101..150")}, Repeat, []string{"0-1-101..0-1-119 are in both and would be applied twice"}},
		{"mariadb empty file left out", []FileSummary{m1, maria(t, "binlog.000003", "0-1-57", "0-1-58..60")}, Note, []string{"binlog.000002 is not given"}},
		{"mariadb failover in one domain", []FileSummary{
			maria(t, "binlog.000001", "", "0-1-1..10", "0-2-11..20"),
			maria(t, "binlog.000002", "0-1-10,0-2-20", "0-2-21..30")}, 0, nil},
		{"mariadb gap after a failover", []FileSummary{
			maria(t, "binlog.000001", "", "0-1-1..10", "0-2-11..20"),
			maria(t, "binlog.000002", "0-1-10,0-2-25", "0-2-26..30")}, Gap, []string{"0-2-21..0-2-25 are missing"}},
		{"mariadb gap across servers", []FileSummary{
			maria(t, "binlog.000001", "", "0-1-1..10"),
			maria(t, "binlog.000002", "0-1-10,0-2-25", "0-2-26..30")}, Gap, []string{"domain 0 after 0-1-10 up to 0-2-25"}},
		{"mariadb two domains", []FileSummary{
			maria(t, "binlog.000001", "", "0-1-1..5", "1-1-1..3"),
			maria(t, "binlog.000002", "0-1-5,1-1-3", "1-1-4..9")}, 0, nil},
		{"mariadb gap in one of two domains", []FileSummary{
			maria(t, "binlog.000001", "", "0-1-1..5", "1-1-1..3"),
			maria(t, "binlog.000002", "0-1-5,1-1-7", "1-1-8..9")}, Gap, []string{"1-1-4..1-1-7 are missing"}},
		{"mariadb new domain", []FileSummary{
			maria(t, "binlog.000001", "", "0-1-1..5"),
			maria(t, "binlog.000002", "0-1-5,1-1-7", "1-1-8..9")}, Gap, []string{"1-1-1..1-1-7 (every GTID of domain 1 up to it) are missing"}},
		{"mariadb domain deleted", []FileSummary{
			maria(t, "binlog.000002", "0-1-5,1-1-3", "0-1-6..9"),
			maria(t, "binlog.000003", "0-1-9", "0-1-10..12")}, 0, nil},
		{"mariadb domain missing from the next list", []FileSummary{
			maria(t, "binlog.000001", "", "0-1-1..5", "1-1-1..3"),
			maria(t, "x", "0-1-5", "0-1-6..9")}, Repeat, []string{"1-1-1..1-1-3 (every GTID of domain 1 up to it) are in both"}},
		{"damaged file ends the check", []FileSummary{damaged, m3}, 0, nil},
		{"mysql complete", []FileSummary{my1, my2, my3}, 0, nil},
		{"mysql gap", []FileSummary{my1, my3}, Gap, []string{"mysql-bin.000003 starts after " + u1 + ":1-119 but mysql-bin.000001 ends at " + u1 + ":1-57: " +
			u1 + ":58-119 missing (mysql-bin.000002 is missing?)"}},
		{"mysql copy under another name", []FileSummary{my2, renamed(my2, "x.000003")}, Repeat, []string{"start at the same GTID set"}},
		{"mysql wrong order, names say nothing", []FileSummary{renamed(my2, "b"), renamed(my1, "a")}, Order, []string{"a starts after (no GTIDs), before b does"}},
		{"mysql overlap", []FileSummary{my1, mysqlFile(t, "mysql-bin.000002", u1+":1-50", u1+":51-60")}, Repeat, []string{u1 + ":51-57 would be applied twice"}},
		{"no gtids, in sequence", []FileSummary{plain("mysql-bin.000001", "mysql-bin.000002"), plain("mysql-bin.000002", "")}, 0, nil},
		{"no gtids, gap in names", []FileSummary{plain("mysql-bin.000001", "mysql-bin.000002"), plain("mysql-bin.000004", "")}, Gap,
			[]string{"mysql-bin.000002..mysql-bin.000003 are missing"}},
		{"no gtids, wrong order", []FileSummary{plain("mysql-bin.000002", ""), plain("mysql-bin.000001", "")}, Order, []string{"mysql-bin.000001 mysql-bin.000002"}},
		{"no gtids, other base name", []FileSummary{plain("a.000001", ""), plain("b.000002", "")}, Note, []string{"cannot check"}},
		{"no gtids, rotate names another file", []FileSummary{plain("x1", "mysql-bin.000002"), plain("x2", "")}, Gap,
			[]string{"x1 ends with a rotate to mysql-bin.000002, but the next file given is x2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := CheckContinuity(c.files)
			if len(c.want) == 0 {
				if len(ps) > 0 {
					t.Fatalf("want no problem, got %v", ps)
				}
				return
			}
			if len(ps) == 0 {
				t.Fatalf("want a problem, got none")
			}
			if ps[0].Kind != c.kind {
				t.Errorf("kind %d, want %d: %s", ps[0].Kind, c.kind, ps[0])
			}
			for _, w := range c.want {
				if !strings.Contains(ps[0].Msg, w) {
					t.Errorf("problem %q\ndoes not say %q", ps[0].Msg, w)
				}
			}
		})
	}
}

func TestCheckResume(t *testing.T) {
	cases := []struct {
		name      string
		pos, file string
		first     FileSummary
		want      string // substring of the problem; "": none
	}{
		{"mariadb starts before the position", "0-1-57", "binlog.000001", maria(t, "binlog.000001", "0-1-30", "0-1-31..80"), ""},
		{"mariadb starts at the position", "0-1-57", "binlog.000001", maria(t, "binlog.000002", "0-1-57", "0-1-58..80"), ""},
		{"mariadb all applied already", "0-1-300", "binlog.000009", maria(t, "binlog.000002", "0-1-57", "0-1-58..80"), ""},
		{"mariadb gap", "0-1-57", "binlog.000001", maria(t, "binlog.000004", "0-1-199", "0-1-200..210"),
			"the stored position ends at 0-1-57 but binlog.000004 starts at 0-1-200: 0-1-58..0-1-199 are missing"},
		{"mariadb other domain only", "1-1-57", "binlog.000001", maria(t, "binlog.000004", "0-1-199", "0-1-200..210"), ""},
		{"mysql first run stored only what it applied", u1 + ":101-150", "", mysqlFile(t, "b.000002", u1+":1-150", u1+":151-160"), ""},
		{"mysql gap", u1 + ":101-150", "", mysqlFile(t, "b.000003", u1+":1-199", u1+":200-210"), u1 + ":151-199 missing"},
		{"relay log follows the position", "0-1-57", "", relay(maria(t, "relay-bin.000007", "", "0-1-58..80")), ""},
		{"relay log begins before the position", "0-1-57", "", relay(maria(t, "relay-bin.000007", "", "0-1-40..80")), ""},
		{"relay log gap", "0-1-57", "", relay(maria(t, "relay-bin.000007", "", "0-1-61..80")),
			"the first transaction of relay log relay-bin.000007 is 0-1-61: 0-1-58..0-1-60 are missing"},
		{"no gtids, next file", "", "mysql-bin.000003", plain("mysql-bin.000004", ""), ""},
		{"no gtids, same file", "", "mysql-bin.000003", plain("mysql-bin.000003", ""), ""},
		{"no gtids, gap", "", "mysql-bin.000003", plain("mysql-bin.000005", ""), "mysql-bin.000004 is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := CheckResume("the stored position", c.pos, c.file, c.first)
			switch {
			case c.want == "" && p != nil:
				t.Fatalf("want no problem, got %s", p)
			case c.want != "" && p == nil:
				t.Fatalf("want a problem saying %q, got none", c.want)
			case c.want != "" && (p.Kind != Gap || !strings.Contains(p.Msg, c.want)):
				t.Fatalf("problem %q (kind %d)\ndoes not say %q", p.Msg, p.Kind, c.want)
			}
		})
	}
}

// The GTID-less case on binlogs written by real MySQL servers
// (/work/shared/fixtures/mysql, anonymous GTIDs): names and the closing
// rotate are all there is to check.
const fixtures = "/work/shared/fixtures/mysql/"

func TestScanFileWithoutGTIDs(t *testing.T) {
	crc, err := ScanFile(fixtures + "mysql-bin.checksum-crc32")
	if err != nil {
		t.Fatal(err)
	}
	none, err := ScanFile(fixtures + "mysql-bin.checksum-none")
	if err != nil {
		t.Fatal(err)
	}
	if crc.Damaged != nil || none.Damaged != nil {
		t.Fatalf("damaged: %v, %v", crc.Damaged, none.Damaged)
	}
	if crc.Flavor != txn.MySQL || crc.Anonymous != 60 || crc.Rotate != "mysql-bin.000002" || !crc.MySQLHeld.Empty() {
		t.Fatalf("checksum-crc32: flavor %s, %d anonymous, rotate %q, GTIDs %s; want mysql, 60, mysql-bin.000002, none",
			crc.Flavor, crc.Anonymous, crc.Rotate, crc.MySQLHeld)
	}
	if none.Anonymous != 40 || none.Rotate != "" {
		t.Fatalf("checksum-none: %d anonymous, rotate %q; want 40 and none (it ends with a stop event)", none.Anonymous, none.Rotate)
	}
	// End is the file's size, and where a torn last event starts.
	data, err := os.ReadFile(fixtures + "mysql-bin.checksum-crc32")
	if err != nil {
		t.Fatal(err)
	}
	if crc.End != uint32(len(data)) {
		t.Fatalf("checksum-crc32: End %d, want the file's size %d", crc.End, len(data))
	}
	torn := filepath.Join(t.TempDir(), "mysql-bin.000001")
	if err := os.WriteFile(torn, data[:len(data)-10], 0o600); err != nil {
		t.Fatal(err)
	}
	tornSum, err := ScanFile(torn)
	if err != nil {
		t.Fatal(err)
	}
	last := uint32(4) // where the last event starts, from the headers' sizes
	for off := last; off < uint32(len(data)); off += binary.LittleEndian.Uint32(data[off+9:]) {
		last = off
	}
	if tornSum.Damaged == nil || tornSum.End != last {
		t.Fatalf("torn copy: End %d, damaged %v; want %d (where the torn event starts) and damage", tornSum.End, tornSum.Damaged, last)
	}
	named := func(f FileSummary, n string) FileSummary { f.Name = n; return f }
	cases := []struct {
		name  string
		files []FileSummary
		kind  ProblemKind
		want  string
	}{
		{"one file", []FileSummary{crc}, 0, ""},
		{"the file the rotate names", []FileSummary{crc, named(none, "mysql-bin.000002")}, 0, ""},
		{"another file than the rotate names", []FileSummary{crc, none}, Gap, "ends with a rotate to mysql-bin.000002, but the next file given is mysql-bin.checksum-none"},
		{"given twice", []FileSummary{crc, crc}, Repeat, "given twice"},
		{"no rotate, names not numbered", []FileSummary{none, crc}, Note, "cannot check"},
		{"numbered, one missing", []FileSummary{named(none, "mysql-bin.000001"), named(crc, "mysql-bin.000003")}, Gap, "mysql-bin.000002 is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := CheckContinuity(c.files)
			if c.want == "" {
				if len(ps) > 0 {
					t.Fatalf("want no problem, got %v", ps)
				}
				return
			}
			if len(ps) == 0 || ps[0].Kind != c.kind || !strings.Contains(ps[0].Msg, c.want) {
				t.Fatalf("problems %v; want kind %d saying %q", ps, c.kind, c.want)
			}
		})
	}
}
