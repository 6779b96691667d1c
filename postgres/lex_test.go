package postgres

import (
	"fmt"
	"strings"
	"testing"
)

// TestLex pins the tokens the DDL parser reads: values unquoted, quoted
// identifiers never keywords, executable comments' bodies kept.
func TestLex(t *testing.T) {
	cases := []struct{ in, want string }{
		{"CREATE TABLE `select`.`a``b` (x INT);", "w:CREATE w:TABLE q:select p:. q:a`b p:( w:x w:INT p:)"},
		{"DEFAULT 'it''s\\n' \"d\"\"q\"", "w:DEFAULT s:it's\n s:d\"q"},
		{"1.5e-3 .5 0x1F 12abc", "n:1.5e-3 n:.5 n:0x1F n:12abc"},
		{"DEFAULT X'1F' b'1'", "w:DEFAULT w:X s:1F w:b s:1"},
		{"a /*!50100 PARTITION */ b /* c */ -- d\n# e\nf", "w:a w:PARTITION w:b w:f"},
		{"CHARSET _utf8mb4'x'", "w:CHARSET w:_utf8mb4 s:x"},
	}
	for _, c := range cases {
		toks, err := lex(c.in)
		if err != nil {
			t.Errorf("lex(%q): %v", c.in, err)
			continue
		}
		var got []string
		for _, tk := range toks {
			k := map[tokKind]string{tWord: "w", tString: "s", tNumber: "n", tPunct: "p"}[tk.kind]
			if tk.quoted {
				k = "q"
			}
			got = append(got, k+":"+tk.text)
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("lex(%q)\n got  %s\n want %s", c.in, g, c.want)
		}
	}
	if toks, _ := lex("`select`"); toks[0].is("SELECT") {
		t.Error("a quoted identifier read as a keyword")
	}
	for in, want := range map[string]string{"a 'b": "unterminated string", "`a": "unterminated identifier", "a /* b": "unterminated comment"} {
		if _, err := lex(in); fmt.Sprint(err) != want {
			t.Errorf("lex(%q) error %v, want %s", in, err, want)
		}
	}
}
