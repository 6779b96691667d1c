package mysql

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

// String is the batch as the target receives it, one statement a line,
// for tests and debugging: a chunk (one round trip) starts with a comment
// line; a BINLOG statement is shown by the events it carries (their
// types and sizes: the raw bytes hold the source's timestamps); an XA
// COMMIT or ROLLBACK by its xid.
func (b *Batch) String() string {
	var s strings.Builder
	for i, c := range b.chunks {
		switch {
		case c.xa != nil:
			verb := "ROLLBACK"
			if c.xa.commit {
				verb = "COMMIT"
			}
			fmt.Fprintf(&s, "-- chunk %d: XA %s %s: the events stored at its XA PREPARE, by %s\n", i, verb, c.xa.xid, describe(c.xa.tx))
		case c.binlog != nil:
			fmt.Fprintf(&s, "-- chunk %d: BINLOG statements of %s\n", i, describe(c.binlog))
			for _, q := range c.each {
				s.WriteString(binlogSummary(q))
				s.WriteString("\n")
			}
		default:
			fmt.Fprintf(&s, "-- chunk %d\n", i)
			s.WriteString(statementLines.Replace(string(c.sql)))
			s.WriteString("\n")
		}
	}
	return s.String()
}

// statementLines breaks a chunk's SQL after each statement, where a
// statement keyword follows its semicolon (a literal is unlikely to).
var statementLines = func() *strings.Replacer {
	var pairs []string
	for _, k := range []string{"BEGIN", "INSERT", "UPDATE", "DELETE", "SET", "XA", "SAVEPOINT", "ROLLBACK", "COMMIT", "REPLACE"} {
		pairs = append(pairs, ";"+k, ";\n"+k)
	}
	return strings.NewReplacer(pairs...)
}()

// binlogSummary shows a BINLOG statement as its events' types and sizes.
func binlogSummary(q string) string {
	rest, ok := strings.CutPrefix(q, "BINLOG '")
	if !ok {
		return q
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(rest, "'"))
	if err != nil {
		return q
	}
	var evs []string
	for len(raw) >= 19 {
		n := int(binary.LittleEndian.Uint32(raw[9:13]))
		if n < 19 || n > len(raw) {
			break
		}
		evs = append(evs, fmt.Sprintf("%s(%d)", eventName(raw[4]), n))
		raw = raw[n:]
	}
	return "BINLOG '...' -- " + strings.Join(evs, " ")
}

func eventName(typ byte) string {
	switch typ {
	case 15:
		return "format_description"
	case 19:
		return "table_map"
	case 23, 30:
		return "write_rows"
	case 24, 31:
		return "update_rows"
	case 25, 32:
		return "delete_rows"
	}
	return fmt.Sprintf("event_%d", typ)
}
