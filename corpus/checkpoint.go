package corpus

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// A Checkpoint is a place in a test's binlog where the targets are
// compared: just before a DROP, TRUNCATE, ALTER or RENAME (a test drops
// its tables at the end, so its last state is empty and tells nothing),
// and at the end. File is an index into the test's binlog files; Offset
// is where the DDL's transaction begins (its GTID event's "# at"), which
// `mariadb-binlog --stop-position` and `prepl replay --stop-position`
// both read as "up to the transaction before".
type Checkpoint struct {
	File   int
	Offset int64 // 0: the end of the last file
	GTID   string
	Before string // the statement the checkpoint comes before ("" at the end)
}

// End reports whether c is the end of the binlog.
func (c Checkpoint) End() bool { return c.Offset == 0 }

func (c Checkpoint) String() string {
	if c.End() {
		return "end"
	}
	return "before " + c.GTID
}

var (
	atLine     = regexp.MustCompile(`^# at (\d+)$`)
	headerLine = regexp.MustCompile(`^#\d{6} +\d+:\d+:\d+ server id \d+ +end_log_pos \d+ .*?\t(\S+)(.*)$`)
	gtidHeader = regexp.MustCompile(`^ (\d+-\d+-\d+)( .*)?$`)
	ddlVerb    = regexp.MustCompile(`(?i)^(DROP|TRUNCATE|ALTER|RENAME)\b`)
	leadingCmt = regexp.MustCompile(`^(\s+|/\*[^!](?s:.*?)\*/|--[^\n]*\n|#[^\n]*\n)+`)
)

// Checkpoints lists the checkpoints of a test's binlog files, read with
// mariadb-binlog (MariaDB's own reader: a checkpoint must not depend on
// the decoder under test). A checkpoint with no transaction since the
// previous one but DROPs and TRUNCATEs is left out: it would compare
// nothing the previous one did not.
func Checkpoints(files []string) ([]Checkpoint, error) {
	var out []Checkpoint
	since := 0 // transactions since the last checkpoint, carried across files
	for i, f := range files {
		cmd := exec.Command("mariadb-binlog", "--no-defaults", f)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		txns, perr := scanCheckpoints(stdout, func(off int64, gtid, stmt string, before int) {
			if before > 0 {
				out = append(out, Checkpoint{File: i, Offset: off, GTID: gtid, Before: stmt})
			}
		}, since)
		io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			return nil, fmt.Errorf("mariadb-binlog %s: %v: %s", f, err, strings.TrimSpace(stderr.String()))
		}
		if perr != nil {
			return nil, fmt.Errorf("read mariadb-binlog %s: %w", f, perr)
		}
		since = txns
	}
	out = append(out, Checkpoint{File: len(files) - 1, GTID: "end"})
	return out, nil
}

// scanCheckpoints reads one file's mariadb-binlog output and calls found
// for every DDL transaction that begins with a checkpoint verb, with the
// count of transactions before it since the last call (since, carried
// from earlier files, counts for the first). It returns the transactions
// after the last call.
func scanCheckpoints(r io.Reader, found func(off int64, gtid, stmt string, before int), since int) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var (
		at        int64 = -1 // offset of the event whose header comes next
		txStart   int64
		gtid      string
		ddl       bool
		inQuery   bool
		stmt      strings.Builder
		count     = since
		checkDone bool
	)
	flush := func() {
		if !inQuery || !ddl || checkDone {
			inQuery = false
			return
		}
		inQuery, checkDone = false, true
		s := lastStatement(stmt.String())
		if m := ddlVerb.FindStringSubmatch(s); m != nil {
			found(txStart, gtid, firstLine(s), count-1)
			// A DROP or TRUNCATE right after a checkpoint needs none of
			// its own: what it removes was compared there, and the
			// tables it leaves are compared at the next one. An ALTER or
			// a RENAME changes what is left, so it counts.
			count = 1
			if v := strings.ToUpper(m[1]); v == "DROP" || v == "TRUNCATE" {
				count = 0
			}
		}
	}
	for sc.Scan() {
		line := sc.Text()
		if m := atLine.FindStringSubmatch(line); m != nil {
			at, _ = strconv.ParseInt(m[1], 10, 64)
			continue
		}
		if at >= 0 {
			m := headerLine.FindStringSubmatch(line)
			if m != nil {
				flush()
				switch kind := m[1]; {
				case kind == "GTID":
					g := gtidHeader.FindStringSubmatch(m[2])
					if g == nil {
						return 0, fmt.Errorf("GTID event at %d: cannot read %q", at, line)
					}
					txStart, gtid, count, checkDone = at, g[1], count+1, false
					ddl = strings.Contains(g[2], " ddl")
				case kind == "Query":
					inQuery = true
					stmt.Reset()
				}
				at = -1
				continue
			}
			at = -1
		}
		if inQuery {
			stmt.WriteString(line)
			stmt.WriteByte('\n')
		}
	}
	flush()
	return count, sc.Err()
}

// lastStatement is the statement of a Query event as mariadb-binlog
// prints it: the last of the "/*!*/;"-terminated pieces, after the
// session's SET and use lines.
func lastStatement(text string) string {
	pieces := strings.Split(text, "/*!*/;")
	for i := len(pieces) - 1; i >= 0; i-- {
		p := strings.TrimSpace(pieces[i])
		if p == "" {
			continue
		}
		return strings.TrimSpace(leadingCmt.ReplaceAllString(p, ""))
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}
