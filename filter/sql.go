package filter

import (
	"strings"

	"github.com/prepl/prepl/internal/sqllex"
)

// tokKind is the kind of an SQL token. Whitespace, comments and the
// delimiters of executable comments are not names, so they are dropped;
// literals still produce a token, so that they separate names.
type tokKind uint8

const (
	tWord    tokKind = iota + 1 // bare word: keyword or unquoted identifier
	tQuoted                     // `quoted identifier`
	tString                     // 'string', "string", X'1F', B'101'
	tPunct                      // one character: . , ( ) = @ ; ...
	tLiteral                    // a number: 1.5, 1e3, 0x1F
)

type token struct {
	kind       tokKind
	start, end int    // byte range in the statement
	val        string // identifier value (unquoted); upper case for words in upper
	upper      string // tWord: the word in upper case
}

func (t token) ident() bool { return t.kind == tQuoted || (t.kind == tWord && !allDigits(t.val)) }

func (t token) is(word string) bool { return t.kind == tWord && t.upper == word }

func (t token) punct(c byte) bool { return t.kind == tPunct && t.val[0] == c }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// tokenize splits a MySQL statement into its code tokens. The contents of
// executable comments (/*! ... */, /*M! ... */) are code, as the server
// runs them; other comments are skipped.
func tokenize(s string) []token {
	var out []token
	l := sqllex.New(s)
	for {
		t, ok := l.Next()
		if !ok {
			return out
		}
		tk := token{start: t.Start, end: t.End, val: t.Text}
		switch t.Kind {
		case sqllex.Word, sqllex.Introducer:
			tk.kind, tk.upper = tWord, strings.ToUpper(t.Text)
		case sqllex.Number:
			if allDigits(t.Text) { // an integer may name a column after "t."
				tk.kind, tk.upper = tWord, t.Text
			} else {
				tk.kind = tLiteral
			}
		case sqllex.Ident:
			tk.kind, tk.val = tQuoted, sqllex.Unquote(t.Text)
		case sqllex.String, sqllex.Hex, sqllex.Bit:
			tk.kind = tString
		case sqllex.Punct:
			tk.kind = tPunct
		default:
			continue
		}
		out = append(out, tk)
	}
}

// name is a possibly schema-qualified object name in a statement.
type name struct {
	schema, object string
	qual           int // token index of the schema qualifier, or -1
	first, last    int // token range of the whole name
}

// nameAt reads a name at token i: ident or ident.ident.
func nameAt(toks []token, i int) (name, bool) {
	if i >= len(toks) || !toks[i].ident() {
		return name{}, false
	}
	if i+2 < len(toks) && toks[i+1].punct('.') && toks[i+2].ident() {
		return name{schema: toks[i].val, object: toks[i+2].val, qual: i, first: i, last: i + 2}, true
	}
	return name{object: toks[i].val, qual: -1, first: i, last: i}, true
}

// edit replaces a byte range of a statement.
type edit struct {
	start, end int
	text       string
}

func applyEdits(s string, edits []edit) string {
	if len(edits) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for _, e := range edits { // in ascending, non-overlapping order
		b.WriteString(s[at:e.start])
		b.WriteString(e.text)
		at = e.end
	}
	b.WriteString(s[at:])
	return b.String()
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// qualifierEdits renames the schema qualifier of every qualified name
// (schema.object, schema.object.column, schema.*) whose schema is rewritten.
func qualifierEdits(toks []token, rewrite map[string]string) []edit {
	var out []edit
	for i := 0; i+2 < len(toks); i++ {
		t := toks[i]
		if !t.ident() || !toks[i+1].punct('.') || !(toks[i+2].ident() || toks[i+2].punct('*')) {
			continue
		}
		if i > 0 && (toks[i-1].punct('.') || toks[i-1].punct('@')) {
			continue // a later part of a name, or a host in user@host
		}
		if dst, ok := rewrite[t.val]; ok {
			out = append(out, edit{t.start, t.end, quoteIdent(dst)})
		}
		i += 2
	}
	return out
}

// rewriteQualified renames schema qualifiers throughout a statement.
func rewriteQualified(sql string, rewrite map[string]string) string {
	if len(rewrite) == 0 {
		return sql
	}
	return applyEdits(sql, qualifierEdits(tokenize(sql), rewrite))
}
