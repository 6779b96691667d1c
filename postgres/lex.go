package postgres

import (
	"fmt"
	"strings"
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

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' || (c == '-' && strings.HasPrefix(s[i:], "-- ")):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*!") || strings.HasPrefix(s[i:], "/*M!"):
			// An executable comment: its body is part of the statement.
			i += 3
			if s[i-1] == 'M' || (i < len(s) && s[i] == '!') {
				i++
			}
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case strings.HasPrefix(s[i:], "*/"):
			i += 2
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("unterminated comment")
			}
			i += j + 4
		case c == '`':
			var b strings.Builder
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						b.WriteByte('`')
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated identifier")
			}
			out = append(out, token{kind: tWord, text: b.String(), quoted: true, start: i, end: j + 1})
			i = j + 1
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == '\\' && j+1 < len(s) {
					b.WriteString(unquoteSQL(s[j : j+2]))
					j++
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						b.WriteByte(c)
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string")
			}
			out = append(out, token{kind: tString, text: b.String(), start: i, end: j + 1})
			i = j + 1
		case c >= '0' && c <= '9' || (c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9'):
			j := i
			for j < len(s) && (isWordByte(s[j]) || s[j] == '.' || ((s[j] == '-' || s[j] == '+') && (s[j-1] == 'e' || s[j-1] == 'E'))) {
				j++
			}
			out = append(out, token{kind: tNumber, text: s[i:j], start: i, end: j})
			i = j
		case isWordByte(c) || c >= 0x80:
			j := i
			for j < len(s) && (isWordByte(s[j]) || s[j] >= 0x80) {
				j++
			}
			out = append(out, token{kind: tWord, text: s[i:j], start: i, end: j})
			i = j
		default:
			out = append(out, token{kind: tPunct, text: string(c), start: i, end: i + 1})
			i++
		}
	}
	for len(out) > 0 && out[len(out)-1].punct(";") {
		out = out[:len(out)-1]
	}
	return out, nil
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
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
