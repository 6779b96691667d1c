package txn

import "strings"

// LeadingWords returns up to n upper-cased leading words of a statement,
// skipping white space and comments (/* */, -- and #; /*! */ version
// comments are skipped too, which only matters for DDL). It is how prepl
// tells kinds of statement apart without parsing SQL.
func LeadingWords(sql string, n int) []string {
	var words []string
	s := sql
	for len(words) < n {
		s = SkipSpaceAndComments(s)
		if s == "" {
			break
		}
		i := 0
		for i < len(s) && isWordByte(s[i]) {
			i++
		}
		if i == 0 {
			break
		}
		words = append(words, strings.ToUpper(s[:i]))
		s = s[i:]
	}
	return words
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// SkipSpaceAndComments returns s without its leading white space and
// comments.
func SkipSpaceAndComments(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		switch {
		case strings.HasPrefix(s, "/*"):
			end := strings.Index(s[2:], "*/")
			if end < 0 {
				return ""
			}
			s = s[2+end+2:]
		case strings.HasPrefix(s, "-- "), strings.HasPrefix(s, "#"):
			end := strings.IndexByte(s, '\n')
			if end < 0 {
				return ""
			}
			s = s[end+1:]
		default:
			return s
		}
	}
}
