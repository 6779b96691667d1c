package depend

import (
	"bytes"
	"testing"
)

func TestFoldText(t *testing.T) {
	latin1 := func(s string) []byte { // s is ASCII or Latin-1 runes
		var b []byte
		for _, r := range s {
			b = append(b, byte(r))
		}
		return b
	}
	cases := []struct {
		charset, collation string
		a, b               []byte
		same               bool // must fold equal; false: must stay apart (sanity)
	}{
		{"utf8mb4", "utf8mb4_general_ci", str("a"), str("A"), true},
		{"utf8mb4", "utf8mb4_general_ci", str("abc"), str("abc  "), true},
		{"utf8mb4", "utf8mb4_general_ci", str(""), str(" "), true},
		{"utf8mb4", "utf8mb4_general_ci", str("Ärger"), str("arger"), true},
		{"utf8mb4", "utf8mb4_general_ci", str("straße"), str("strase"), true},
		{"utf8mb4", "utf8mb4_unicode_ci", str("straße"), str("STRASSE"), true},
		{"utf8mb4", "utf8mb4_unicode_ci", str("ﬁle"), str("file"), true},
		{"utf8mb4", "utf8mb4_unicode_ci", str("Æsir"), str("aesir"), true},
		{"utf8mb4", "utf8mb4_general_ci", str("😀"), str("😁"), true},
		{"utf8mb4", "utf8mb4_0900_ai_ci", str("a\u200bb"), str("ab"), true},
		{"utf8mb4", "utf8mb4_0900_ai_ci", str("İstanbul"), str("istanbul"), true},
		{"utf8mb4", "utf8mb4_german2_ci", str("Müller"), str("mueller"), true},
		{"utf8mb4", "utf8mb4_swedish_ci", str("Ü"), str("y"), true},
		{"utf8mb4", "utf8mb4_danish_ci", str("Åse"), str("aase"), true},
		{"utf8mb4", "utf8mb4_swedish_ci", str("Øre"), str("öre"), true},
		{"latin1", "latin1_swedish_ci", latin1("Ü"), str("Y"), true},
		{"latin1", "latin1_swedish_ci", latin1("Ä"), latin1("æ"), true},
		{"latin1", "latin1_swedish_ci", latin1("Ä"), str(`\`), true},
		{"latin1", "latin1_swedish_ci", latin1("Å"), str("["), true},
		{"latin1", "latin1_swedish_ci", latin1("ö"), str("]"), true},
		{"latin1", "latin1_swedish_ci", latin1("Abc "), str("abc"), true},
		{"utf8mb4", "utf8mb4_general_ci", str("a"), str("b"), false},
		{"utf8mb4", "utf8mb4_general_ci", str("a b"), str("ab"), false},
		{"utf8mb4", "utf8mb4_bin", str("a"), str("A"), false},
		{"utf8mb4", "utf8mb4_bin", str("a "), str("a"), true},
		{"utf16", "utf16_bin", []byte{0, 'a', 0, ' '}, []byte{0, 'a'}, true},
		{"utf16", "utf16_general_ci", []byte{0, 'a'}, []byte{0, 'A'}, true},
		{"gbk", "gbk_chinese_ci", str("a"), str("b"), true}, // undecodable: one skeleton
		{"gbk", "gbk_bin", str("a "), str("a"), true},
		{"gbk", "gbk_bin", str("a"), str("A"), false},
	}
	for _, c := range cases {
		fa, fb := foldText(c.a, c.charset, c.collation, 0), foldText(c.b, c.charset, c.collation, 0)
		if bytes.Equal(fa, fb) != c.same {
			t.Errorf("%s: fold(%q)=%q fold(%q)=%q, want same=%v", c.collation, c.a, fa, c.b, fb, c.same)
		}
	}
}
