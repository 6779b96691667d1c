package run

import (
	"errors"
	"strings"
	"testing"
)

// TestSkipID: a skip request names one transaction, by GTID (MariaDB or
// MySQL) or by FILE:OFFSET, the file by its base name.
func TestSkipID(t *testing.T) {
	for _, c := range []struct {
		gtid, pos, want, err string
	}{
		{"0-1-1234", "", "0-1-1234", ""},
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:7", "", "3e11fa47-71ca-11e1-9e33-c80aa9429562:7", ""},
		{"", "/var/lib/mysql/binlog.000042:1234", "binlog.000042:1234", ""},
		{"", "", "", "give one of --gtid and --position"},
		{"0-1-2", "binlog.000001:4", "", "give one of --gtid and --position"},
		{"0-1", "", "", `--gtid "0-1": want a MariaDB GTID`},
		{"", "binlog.000042", "", `--position "binlog.000042": want FILE:OFFSET`},
		{"", "binlog.000042:x", "", "want FILE:OFFSET"},
		{"", ":4", "", "want FILE:OFFSET"},
	} {
		id, err := SkipID(c.gtid, c.pos)
		switch {
		case c.err == "" && (err != nil || id != c.want):
			t.Errorf("SkipID(%q, %q) = %q, %v; want %q", c.gtid, c.pos, id, err, c.want)
		case c.err != "" && (!errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("SkipID(%q, %q): %v; want a usage error saying %q", c.gtid, c.pos, err, c.err)
		}
	}
}
