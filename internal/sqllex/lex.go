// Package sqllex splits MySQL/MariaDB SQL text into tokens, without
// losing a byte: the texts of the tokens of s, in order, are s.
//
// It knows the lexical rules the server applies before parsing:
// identifiers in backquotes (a backquote doubled inside stands for one);
// strings in single or double quotes, with doubled quotes and backslash
// escapes inside; character set introducers (_utf8mb4'x', N'x'); comments
// (# to the end of the line, -- too when a blank or control byte follows
// it, /* ... */); executable comments /*!NNNNN ... */ and
// MariaDB's /*M!NNNNNN ... */, whose body is tokenized as code, as the
// server runs it; numbers (12, 1.5, .5, 1e-3), hexadecimal and bit
// literals (X'1F', 0x1F, B'101', 0b101); and everything else one byte a
// token (operators such as <= come as two Punct tokens).
//
// It does not know SQL modes: backslash is an escape in strings
// (NO_BACKSLASH_ESCAPES off) and "x" is a string (ANSI_QUOTES off), as in
// the statements a binlog holds from a server with the default modes.
// Malformed text is still split losslessly: a string, identifier or
// comment that is not closed runs to the end, marked Unterminated.
package sqllex

// Kind is the kind of a token.
type Kind uint8

const (
	Space      Kind = iota + 1 // blanks: space, \t, \n, \v, \f, \r
	Comment                    // -- or # to the end of the line (newline excluded), or /* ... */
	ExecOpen                   // "/*!" or "/*M!" and the version digits after it
	ExecClose                  // the "*/" that closes an executable comment
	Word                       // keyword or unquoted identifier: letters, digits, _, $, bytes >= 0x80
	Ident                      // `quoted identifier`
	String                     // 'string' or "string"
	Introducer                 // _charset or N right before a string: _utf8mb4'x'
	Number                     // 12, 1.5, .5, 1e-3, 2.
	Hex                        // X'1F' or 0x1F
	Bit                        // B'101' or 0b101
	Punct                      // one byte of anything else
)

// Token is one token of a text.
type Token struct {
	Kind       Kind
	Text       string // s[Start:End]
	Start, End int
	// Unterminated: a string, identifier, hex/bit literal or comment the
	// text ends inside.
	Unterminated bool
}

// Code tells whether the token is code for the server: not Space or
// Comment, nor the delimiters of an executable comment.
func (t Token) Code() bool {
	switch t.Kind {
	case Space, Comment, ExecOpen, ExecClose:
		return false
	}
	return true
}

// Is tells whether t is the bare word w, case-insensitively (w in upper
// case or not).
func (t Token) Is(w string) bool {
	if t.Kind != Word || len(t.Text) != len(w) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if upper(t.Text[i]) != upper(w[i]) {
			return false
		}
	}
	return true
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// Tokens splits s into all its tokens, space and comments included.
func Tokens(s string) []Token {
	var out []Token
	l := Lexer{src: s}
	for {
		t, ok := l.Next()
		if !ok {
			return out
		}
		out = append(out, t)
	}
}

// Lexer reads the tokens of a text one by one.
type Lexer struct {
	src    string
	at     int
	inExec bool // inside /*! ... */
	// prev is the kind of the last token; prevDot: the last token is a
	// "." right after an identifier, so what follows is an identifier
	// even if it begins with a digit (t.1e5 names column 1e5).
	prev    Kind
	prevDot bool
}

// New returns a lexer of s.
func New(s string) *Lexer { return &Lexer{src: s} }

// Next returns the next token, or false at the end of the text.
func (l *Lexer) Next() (Token, bool) {
	if l.at >= len(l.src) {
		return Token{}, false
	}
	start := l.at
	kind, end, open := l.scan()
	l.at = end
	afterIdent := l.prev == Word || l.prev == Ident
	l.prevDot = kind == Punct && l.src[start] == '.' && afterIdent
	l.prev = kind
	return Token{Kind: kind, Text: l.src[start:end], Start: start, End: end, Unterminated: open}, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// IsWordByte tells whether c may appear in an unquoted identifier.
func IsWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (l *Lexer) byteAt(i int) byte {
	if i < len(l.src) {
		return l.src[i]
	}
	return 0
}

// scan reads the token at l.at and returns its kind and end.
func (l *Lexer) scan() (Kind, int, bool) {
	s, i := l.src, l.at
	c := s[i]
	switch {
	case isSpace(c):
		j := i + 1
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		return Space, j, false
	case c == '#' || c == '-' && l.byteAt(i+1) == '-' && (i+2 == len(s) || isSpace(s[i+2]) || s[i+2] < ' ' || s[i+2] == 0x7f):
		// "--" starts a comment only before a blank or control byte.
		j := i
		for j < len(s) && s[j] != '\n' {
			j++
		}
		return Comment, j, false
	case c == '*' && l.inExec && l.byteAt(i+1) == '/':
		l.inExec = false
		return ExecClose, i + 2, false
	case c == '/' && l.byteAt(i+1) == '*':
		j := i + 2
		if l.byteAt(j) == 'M' && l.byteAt(j+1) == '!' {
			j++
		}
		if l.byteAt(j) == '!' && !l.inExec {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			l.inExec = true
			return ExecOpen, j, false
		}
		for j := i + 2; j+1 < len(s); j++ {
			if s[j] == '*' && s[j+1] == '/' {
				return Comment, j + 2, false
			}
		}
		return Comment, len(s), true
	case c == '`':
		end, open := quotedEnd(s, i, false)
		return Ident, end, open
	case c == '\'' || c == '"':
		end, open := quotedEnd(s, i, true)
		return String, end, open
	case (c == 'x' || c == 'X' || c == 'b' || c == 'B') && l.byteAt(i+1) == '\'' && !l.prevDot:
		end, open := quotedEnd(s, i+1, false)
		if c == 'x' || c == 'X' {
			return Hex, end, open
		}
		return Bit, end, open
	case l.prevDot && IsWordByte(c):
		return Word, wordEnd(s, i), false
	case isDigit(c) || c == '.' && isDigit(l.byteAt(i+1)) && l.prev != Word && l.prev != Ident:
		if k, end := number(s, i); k != 0 {
			return k, end, false
		}
		return Word, wordEnd(s, i), false
	case IsWordByte(c):
		j := wordEnd(s, i)
		if q := l.byteAt(j); (q == '\'' || q == '"') && (c == '_' || j == i+1 && (c == 'N' || c == 'n')) {
			return Introducer, j, false
		}
		return Word, j, false
	}
	return Punct, i + 1, false
}

func wordEnd(s string, i int) int {
	for i < len(s) && IsWordByte(s[i]) {
		i++
	}
	return i
}

// quotedEnd returns the end of the quoted token whose opening quote is at
// s[i]: a doubled quote stands for one, and where backslash escapes, a
// backslash and the byte after it stand for one.
func quotedEnd(s string, i int, backslash bool) (int, bool) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && backslash:
			j++
		case s[j] == q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1, false
		}
	}
	return len(s), true
}

// number reads the numeric literal at s[i], or returns kind 0 when the
// digits there begin an identifier (1abc, 123_x).
func number(s string, i int) (Kind, int) {
	if s[i] == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'b') {
		j, hex := i+2, s[i+1] == 'x'
		for j < len(s) && (hex && isHexDigit(s[j]) || !hex && (s[j] == '0' || s[j] == '1')) {
			j++
		}
		if j > i+2 && (j == len(s) || !IsWordByte(s[j])) {
			if hex {
				return Hex, j
			}
			return Bit, j
		}
		return 0, 0
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	} else if j < len(s) && IsWordByte(s[j]) && s[j] != 'e' && s[j] != 'E' {
		return 0, 0
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	if j < len(s) && IsWordByte(s[j]) && !(s[i] == '.' || containsDot(s[i:j])) {
		return 0, 0 // 12e, 1e5x: an identifier
	}
	return Number, j
}

func containsDot(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return true
		}
	}
	return false
}

func isHexDigit(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Unquote returns the name a backquoted identifier token stands for.
func Unquote(text string) string {
	if len(text) == 0 || text[0] != '`' {
		return text
	}
	return unquote(text, false)
}

// UnquoteString returns the value of a string token: doubled quotes and
// backslash escapes (\n, \t, \0, \Z, \b, \r; \% and \_ keep their
// backslash, as in LIKE patterns) resolved.
func UnquoteString(text string) string {
	if len(text) == 0 || text[0] != '\'' && text[0] != '"' {
		return text
	}
	return unquote(text, true)
}

func unquote(text string, backslash bool) string {
	q := text[0]
	b := make([]byte, 0, len(text))
	for j := 1; j < len(text); j++ {
		c := text[j]
		switch {
		case c == '\\' && backslash && j+1 < len(text):
			j++
			b = append(b, Escape(text[j])...)
		case c == q:
			if j+1 < len(text) && text[j+1] == q {
				j++
				b = append(b, q)
				continue
			}
			return string(b)
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// Escape returns what the backslash escape \c stands for in a string.
func Escape(c byte) string {
	switch c {
	case 'n':
		return "\n"
	case 't':
		return "\t"
	case 'r':
		return "\r"
	case 'b':
		return "\b"
	case '0':
		return "\x00"
	case 'Z':
		return "\x1a"
	case '%', '_':
		return "\\" + string(c)
	}
	return string(c)
}
