package redact

import (
	"strings"
	"unicode"
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
	for i := 0; i < len(stmt); {
		c := stmt[i]
		switch {
		case c == '\'' || c == '"':
			end := literalEnd(stmt, i)
			if secretFollows(prev) {
				b.WriteByte(c)
				b.WriteString(Mask)
				b.WriteByte(c)
			} else {
				b.WriteString(stmt[i:end])
			}
			prev = "'"
			i = end
		case c == '`':
			end := strings.IndexByte(stmt[i+1:], '`')
			if end < 0 {
				end = len(stmt)
			} else {
				end += i + 2
			}
			b.WriteString(stmt[i:end])
			prev = "`"
			i = end
		case c == '/' && strings.HasPrefix(stmt[i:], "/*") && !strings.HasPrefix(stmt[i:], "/*!"):
			end := strings.Index(stmt[i+2:], "*/")
			if end < 0 {
				end = len(stmt)
			} else {
				end += i + 4
			}
			b.WriteString(stmt[i:end])
			i = end
		case isWord(c):
			j := i
			for j < len(stmt) && isWord(stmt[j]) {
				j++
			}
			w := strings.ToUpper(stmt[i:j])
			// A character set introducer or N/X/B prefix (_utf8mb4'x')
			// belongs to the literal that follows.
			introducer := j < len(stmt) && (stmt[j] == '\'' || stmt[j] == '"') && (w[0] == '_' || w == "N" || w == "X" || w == "B")
			if !introducer {
				prev = w
			}
			b.WriteString(stmt[i:j])
			i = j
		case c == '(' || unicode.IsSpace(rune(c)):
			// PASSWORD ( 'x' ): the parenthesis keeps PASSWORD as prev.
			b.WriteByte(c)
			i++
		case c == '=':
			if prev == "PASSWORD" || prev == "MASTER_PASSWORD" || setPassword {
				prev = "PASSWORD="
			} else if prev != "PASSWORD=" {
				prev = "="
			}
			b.WriteByte(c)
			i++
		default:
			prev = string(c)
			b.WriteByte(c)
			i++
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

func isWord(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// literalEnd is the index just past the string literal starting at i
// (quote doubled or backslash-escaped inside); the end of s when it is
// not closed, so an unterminated literal is masked whole.
func literalEnd(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}
