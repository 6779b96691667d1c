package sqllex

import (
	"strings"
	"testing"
)

// tok is a token written as kind:text, for tables.
func render(toks []Token) string {
	names := map[Kind]string{Space: "sp", Comment: "cm", ExecOpen: "xo", ExecClose: "xc", Word: "w", Ident: "id",
		String: "s", Introducer: "in", Number: "n", Hex: "hex", Bit: "bit", Punct: "p"}
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(names[t.Kind] + ":" + t.Text)
		if t.Unterminated {
			b.WriteString("!")
		}
	}
	return b.String()
}

func TestTokens(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SELECT a", "w:SELECT sp:  w:a"},
		{"`a``b`.`c`", "id:`a``b` p:. id:`c`"},
		{"'it''s' \"a\\\"b\"", "s:'it''s' sp:  s:\"a\\\"b\""},
		{"'a\\'", "s:'a\\'!"},
		{"`open", "id:`open!"},
		{"_utf8mb4'x' N'y' n\"z\" _bin", "in:_utf8mb4 s:'x' sp:  in:N s:'y' sp:  in:n s:\"z\" sp:  w:_bin"},
		{"X'1F' x'' B'101' 0x1F 0b10 0X1F 0xZ", "hex:X'1F' sp:  hex:x'' sp:  bit:B'101' sp:  hex:0x1F sp:  bit:0b10 sp:  w:0X1F sp:  w:0xZ"},
		{"12 1.5 .5 1e-3 2. 1E+10", "n:12 sp:  n:1.5 sp:  n:.5 sp:  n:1e-3 sp:  n:2. sp:  n:1E+10"},
		{"1abc 123_x 12e 1e5x", "w:1abc sp:  w:123_x sp:  w:12e sp:  w:1e5x"},
		{"t.1e5 t.5 `t`.12", "w:t p:. w:1e5 sp:  w:t p:. w:5 sp:  id:`t` p:. w:12"},
		{"a-- c\nb", "w:a cm:-- c sp:\n w:b"},
		{"a--b", "w:a p:- p:- w:b"},
		{"a --\tc", "w:a sp:  cm:--\tc"},
		{"a --", "w:a sp:  cm:--"},
		{"# x\ny", "cm:# x sp:\n w:y"},
		{"a/* c */b", "w:a cm:/* c */ w:b"},
		{"a/* c", "w:a cm:/* c!"},
		{"/*!50001 CREATE */ /*M!100100 x*/", "xo:/*!50001 sp:  w:CREATE sp:  xc:*/ sp:  xo:/*M!100100 sp:  w:x xc:*/"},
		{"/*!a/*!b*/c*/", "xo:/*! w:a cm:/*!b*/ w:c xc:*/"},
		{"a*/", "w:a p:* p:/"},
		{"a<=b", "w:a p:< p:= w:b"},
		{"é$x", "w:é$x"},
		{"@`u`@'h'", "p:@ id:`u` p:@ s:'h'"},
	}
	for _, c := range cases {
		if got := render(Tokens(c.in)); got != c.want {
			t.Errorf("Tokens(%q)\n got  %s\n want %s", c.in, got, c.want)
		}
	}
}

func TestUnquote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"`a``b`", "a`b"},
		{"`open", "open"},
		{"'it''s'", "it's"},
		{`'a\nb\\c\'d'`, "a\nb\\c'd"},
		{`"x\%"`, `x\%`},
		{`'a""b'`, `a""b`},
		{"word", "word"},
	}
	for _, c := range cases {
		f := Unquote
		if c.in[0] != '`' {
			f = UnquoteString
		}
		if got := f(c.in); got != c.want {
			t.Errorf("unquote(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestIs(t *testing.T) {
	tok := Tokens("create")[0]
	if !tok.Is("CREATE") || tok.Is("CREAT") || Tokens("`create`")[0].Is("CREATE") {
		t.Error("Is: a bare word matches its upper case, a quoted identifier never")
	}
}

// FuzzTokens checks that the tokens of any text give it back, each token
// is not empty, and only the kinds that can be unterminated are.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"SELECT 1", "/*!50001 a*/", "'a\\", "`a``", "x'1", "0x1g", "t.1e5", "--", "/*", "_a'b'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		at := 0
		for _, tok := range Tokens(s) {
			if tok.Start != at || tok.End <= tok.Start || tok.Text != s[tok.Start:tok.End] {
				t.Fatalf("%q: token %+v does not follow offset %d", s, tok, at)
			}
			if tok.Unterminated && tok.End != len(s) {
				t.Fatalf("%q: unterminated token %+v before the end", s, tok)
			}
			at = tok.End
			b.WriteString(tok.Text)
		}
		if b.String() != s {
			t.Fatalf("tokens of %q give back %q", s, b.String())
		}
	})
}
