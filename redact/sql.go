package redact

import (
	"strings"

	"github.com/prepl/prepl/internal/sqllex"
)

// SQL masks the secrets of account statements in stmt, for a log line:
// the string after IDENTIFIED BY [PASSWORD], IDENTIFIED VIA/WITH plugin
// USING/AS/BY, PASSWORD(...) and OLD_PASSWORD(...), SET PASSWORD ... =,
// and MASTER_PASSWORD =. A statement that names neither IDENTIFIED nor
// PASSWORD is returned as is; in one that does, a literal after one of
// those words is masked even where it is not a secret (over-masking a log
// line is harmless, a missed secret is not). The statement applied is
// never changed: this is for display only.
func SQL(stmt string) string {
	up := strings.ToUpper(stmt)
	if !strings.Contains(up, "IDENTIFIED") && !strings.Contains(up, "PASSWORD") {
		return String(stmt)
	}
	// SET PASSWORD FOR u@h = 'hash': the '=' does not follow PASSWORD.
	setPassword := strings.HasPrefix(strings.Join(strings.Fields(up), " "), "SET PASSWORD")
	var b strings.Builder
	b.Grow(len(stmt))
	prev := "" // the last keyword or operator seen, upper case
	for l := sqllex.New(stmt); ; {
		t, ok := l.Next()
		if !ok {
			break
		}
		switch t.Kind {
		case sqllex.String, sqllex.Hex, sqllex.Bit:
			if t.Kind != sqllex.String && t.Text[1] != '\'' { // 0x1F, 0b1: as a word, not masked
				prev = strings.ToUpper(t.Text)
				b.WriteString(t.Text)
				break
			}
			if secretFollows(prev) {
				q := t.Text[0]
				if t.Kind != sqllex.String { // X'..', B'..': the X stays
					b.WriteString(t.Text[:1])
					q = t.Text[1]
				}
				b.WriteByte(q)
				b.WriteString(Mask)
				b.WriteByte(q)
			} else {
				b.WriteString(t.Text)
			}
			prev = "'"
		case sqllex.Ident:
			b.WriteString(t.Text)
			prev = "`"
		case sqllex.Space, sqllex.Comment:
			b.WriteString(t.Text)
		case sqllex.Word, sqllex.Number, sqllex.Introducer:
			// A character set introducer or N/X/B prefix (_utf8mb4'x',
			// X"1F") belongs to the literal that follows.
			w := strings.ToUpper(t.Text)
			q := byte(0)
			if t.End < len(stmt) {
				q = stmt[t.End]
			}
			if !((q == '\'' || q == '"') && (w[0] == '_' || w == "N" || w == "X" || w == "B")) {
				prev = w
			}
			b.WriteString(t.Text)
		case sqllex.Punct:
			switch c := t.Text[0]; c {
			case '(': // PASSWORD ( 'x' ): the parenthesis keeps PASSWORD as prev.
			case '=':
				if prev == "PASSWORD" || prev == "MASTER_PASSWORD" || setPassword {
					prev = "PASSWORD="
				} else if prev != "PASSWORD=" {
					prev = "="
				}
			default:
				prev = t.Text
			}
			b.WriteString(t.Text)
		default: // the delimiters of an executable comment
			prev = t.Text
			b.WriteString(t.Text)
		}
	}
	return String(b.String())
}

// secretFollows tells whether a literal after token prev is a secret.
func secretFollows(prev string) bool {
	switch prev {
	case "BY", "USING", "AS", "PASSWORD", "OLD_PASSWORD", "PASSWORD=":
		return true
	}
	return false
}
