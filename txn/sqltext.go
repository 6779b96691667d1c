package txn

import (
	"strings"

	"github.com/prepl/prepl/internal/sqllex"
)

// LeadingWords returns up to n upper-cased leading words of a statement,
// skipping white space and comments (/* */, -- and #; /*! */ version
// comments are skipped too, which only matters for DDL). It is how prepl
// tells kinds of statement apart without parsing SQL. A word is letters,
// digits and _; a token that goes on with other bytes gives its leading
// word and ends the list.
func LeadingWords(sql string, n int) []string {
	var words []string
	for l := codeLexer(sql); len(words) < n; {
		t, ok := l.next()
		if !ok {
			break
		}
		i := 0
		for i < len(t.Text) && isWordByte(t.Text[i]) {
			i++
		}
		if i == 0 {
			break
		}
		words = append(words, strings.ToUpper(t.Text[:i]))
		if i < len(t.Text) {
			break
		}
	}
	return words
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// SkipSpaceAndComments returns s without its leading white space and
// comments (version comments included).
func SkipSpaceAndComments(s string) string {
	t, ok := codeLexer(s).next()
	if !ok {
		return ""
	}
	return s[t.Start:]
}

// lexer reads the tokens of a statement that are code outside version
// comments (codeLexer).
type lexer struct {
	l      *sqllex.Lexer
	inExec bool
}

func codeLexer(s string) *lexer { return &lexer{l: sqllex.New(s)} }

func (x *lexer) next() (sqllex.Token, bool) {
	for {
		t, ok := x.l.Next()
		switch {
		case !ok:
			return t, false
		case t.Kind == sqllex.ExecOpen || t.Kind == sqllex.ExecClose:
			x.inExec = t.Kind == sqllex.ExecOpen
		case t.Code() && !x.inExec:
			return t, true
		}
	}
}
