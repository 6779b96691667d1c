package postgres

import (
	"fmt"
	"strings"

	"github.com/prepl/prepl/internal/sqllex"
)

// A small MySQL/MariaDB lexer for the DDL this package translates. The
// TiDB parser was tried first: it rejects MariaDB's spatial column types
// (so a POINT column would be a syntax error instead of an error naming
// the column), MariaDB 11's default collations (utf8mb4_uca1400_ai_ci)
// and CREATE OR REPLACE, and adds 8 MB of generated parser to the
// binary; the subset translated here is small enough to read by hand.

type tokKind uint8

const (
	tWord   tokKind = iota + 1 // bare word or `quoted` identifier
	tString                    // 'x' or "x"
	tNumber
	tPunct
)

type token struct {
	kind   tokKind
	text   string // identifier or string value (unquoted); punctuation
	quoted bool   // a `quoted` identifier: never a keyword
	start  int    // offsets in the statement, for expression text
	end    int
}

func (t token) is(kw string) bool {
	return t.kind == tWord && !t.quoted && strings.EqualFold(t.text, kw)
}
func (t token) punct(p string) bool {
	return t.kind == tPunct && t.text == p
}

// lex splits a statement into the tokens the parser reads, from the
// shared MySQL lexer: a trailing ";" is dropped, and a string, identifier
// or comment left open is an error.
func lex(s string) ([]token, error) {
	var out []token
	l := sqllex.New(s)
	for {
		t, ok := l.Next()
		if !ok {
			break
		}
		if t.Unterminated {
			switch t.Kind {
			case sqllex.Comment:
				return nil, fmt.Errorf("unterminated comment")
			case sqllex.Ident:
				return nil, fmt.Errorf("unterminated identifier")
			default:
				return nil, fmt.Errorf("unterminated string")
			}
		}
		tk := token{text: t.Text, start: t.Start, end: t.End}
		switch t.Kind {
		case sqllex.Word, sqllex.Introducer:
			tk.kind = tWord
			if c := t.Text[0]; c >= '0' && c <= '9' {
				tk.kind = tNumber // 1abc, 12e: read as a number, as before
			}
		case sqllex.Ident:
			tk.kind, tk.text, tk.quoted = tWord, sqllex.Unquote(t.Text), true
		case sqllex.String:
			tk.kind, tk.text = tString, stringValue(t.Text)
		case sqllex.Number:
			tk.kind = tNumber
		case sqllex.Hex, sqllex.Bit:
			if t.Text[0] == '0' { // 0x1F
				tk.kind = tNumber
				break
			}
			// X'1F': the word X and the string '1F'.
			out = append(out, token{kind: tWord, text: t.Text[:1], start: t.Start, end: t.Start + 1})
			tk.kind, tk.text, tk.start = tString, stringValue(t.Text[1:]), t.Start+1
		case sqllex.Punct:
			tk.kind = tPunct
		default: // space, comments, the delimiters of executable comments
			continue
		}
		out = append(out, tk)
	}
	for len(out) > 0 && out[len(out)-1].punct(";") {
		out = out[:len(out)-1]
	}
	return out, nil
}

// stringValue is the value of a closed string token, its escapes read by
// unquoteSQL.
func stringValue(text string) string {
	var b strings.Builder
	q := text[0]
	for j := 1; j < len(text)-1; j++ {
		switch {
		case text[j] == '\\':
			b.WriteString(unquoteSQL(text[j : j+2]))
			j++
		case text[j] == q: // doubled
			b.WriteByte(q)
			j++
		default:
			b.WriteByte(text[j])
		}
	}
	return b.String()
}

// parser walks the tokens of one statement.
type parser struct {
	src  string
	toks []token
	i    int
	// ifNotExists: the CREATE TABLE read said IF NOT EXISTS.
	ifNotExists bool
}

func (p *parser) peek() token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return token{}
}

func (p *parser) at(kws ...string) bool {
	for j, kw := range kws {
		if p.i+j >= len(p.toks) || !p.toks[p.i+j].is(kw) {
			return false
		}
	}
	return true
}

// accept consumes the keywords if they come next.
func (p *parser) accept(kws ...string) bool {
	if p.at(kws...) {
		p.i += len(kws)
		return true
	}
	return false
}

func (p *parser) acceptPunct(s string) bool {
	if p.peek().punct(s) {
		p.i++
		return true
	}
	return false
}

func (p *parser) done() bool { return p.i >= len(p.toks) }

func (p *parser) errorf(format string, a ...any) error {
	near := "end of statement"
	if !p.done() {
		t := p.peek()
		end := t.start + 40
		if end > len(p.src) {
			end = len(p.src)
		}
		near = fmt.Sprintf("%q", p.src[t.start:end])
	}
	return fmt.Errorf(format+" (near %s)", append(a, near)...)
}

func (p *parser) expectPunct(s string) error {
	if !p.acceptPunct(s) {
		return p.errorf("expected %q", s)
	}
	return nil
}

// ident reads an identifier.
func (p *parser) ident() (string, error) {
	t := p.peek()
	if t.kind != tWord && t.kind != tString {
		return "", p.errorf("expected a name")
	}
	p.i++
	return t.text, nil
}

// name reads [db.]table.
func (p *parser) name(defaultDB string) (db, table string, err error) {
	a, err := p.ident()
	if err != nil {
		return "", "", err
	}
	if p.acceptPunct(".") {
		b, err := p.ident()
		return a, b, err
	}
	return defaultDB, a, nil
}

// balanced consumes a parenthesized group (the "(" is next) and returns
// the source text inside it.
func (p *parser) balanced() (string, error) {
	if !p.peek().punct("(") {
		return "", p.errorf("expected \"(\"")
	}
	start := p.peek().end
	depth := 0
	for ; p.i < len(p.toks); p.i++ {
		t := p.toks[p.i]
		if t.punct("(") {
			depth++
		} else if t.punct(")") {
			depth--
			if depth == 0 {
				p.i++
				return strings.TrimSpace(p.src[start:t.start]), nil
			}
		}
	}
	return "", p.errorf("unbalanced parentheses")
}
