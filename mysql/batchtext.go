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
			fmt.Fprintf(&s, "-- chunk %d: XA %s %s: the events stored at its XA PREPARE, by %s\n", i, c.xa.verb(), c.xa.xid, describe(c.xa.tx))
		case c.binlog != nil:
			fmt.Fprintf(&s, "-- chunk %d: BINLOG statements of %s\n", i, describe(c.binlog))
			for _, q := range c.each {
				s.WriteString(binlogSummary(q))
				s.WriteString("\n")
			}
		default:
			fmt.Fprintf(&s, "-- chunk %d\n", i)
			c.statements(func(q []byte, _ rowExpect) {
				s.Write(q)
				s.WriteString(";\n")
			})
		}
	}
	return s.String()
}

// verb is the XA step's: COMMIT or ROLLBACK.
func (x *xaStep) verb() string {
	if x.commit {
		return "COMMIT"
	}
	return "ROLLBACK"
}

// statements calls f with each statement of the chunk's sql (without its
// semicolon) and its expectation.
func (c *chunk) statements(f func(q []byte, e rowExpect)) {
	start := 0
	for _, e := range c.expect {
		f(c.sql[start:e.end-1], e)
		start = e.end
	}
}

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
