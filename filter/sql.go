package filter

import "strings"

// tokKind is the kind of an SQL token. Whitespace, comments and string
// literals are not names, so the tokenizer skips them (strings still
// produce a token, so that they separate names).
type tokKind uint8

const (
	tWord   tokKind = iota + 1 // bare word: keyword or unquoted identifier
	tQuoted                    // `quoted identifier`
	tString                    // 'string' or "string"
	tPunct                     // one character: . , ( ) = @ ; ...
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

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// tokenize splits a MySQL statement into tokens. The contents of
// executable comments (/*! ... */, /*M! ... */) are tokenized as code, as
// the server runs them; other comments are skipped.
func tokenize(s string) []token {
	var out []token
	inExec := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#' || (c == '-' && strings.HasPrefix(s[i:], "-- ")) || (c == '-' && strings.HasPrefix(s[i:], "--\n")):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '*' && inExec && strings.HasPrefix(s[i:], "*/"):
			inExec = false
			i += 2
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			j := i + 2
			if j < len(s) && s[j] == 'M' && strings.HasPrefix(s[j:], "M!") {
				j++
			}
			if j < len(s) && s[j] == '!' && !inExec {
				j++
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
				inExec = true
				i = j
				continue
			}
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += 2 + end + 2
		case c == '`':
			j, val := i+1, strings.Builder{}
			for j < len(s) {
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						val.WriteByte('`')
						j += 2
						continue
					}
					break
				}
				val.WriteByte(s[j])
				j++
			}
			out = append(out, token{kind: tQuoted, start: i, end: min(j+1, len(s)), val: val.String()})
			i = min(j+1, len(s))
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(s) {
				if s[j] == '\\' {
					j += 2
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(s))
			out = append(out, token{kind: tString, start: i, end: end, val: s[i:end]})
			i = end
		case wordByte(c):
			j := i
			for j < len(s) && wordByte(s[j]) {
				j++
			}
			w := s[i:j]
			out = append(out, token{kind: tWord, start: i, end: j, val: w, upper: strings.ToUpper(w)})
			i = j
		default:
			out = append(out, token{kind: tPunct, start: i, end: i + 1, val: s[i : i+1]})
			i++
		}
	}
	return out
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
