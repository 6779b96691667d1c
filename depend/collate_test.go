package depend

import (
	"bytes"
	"strings"
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
		// Found by TestServerUniqueCollisionsHaveEqualKeys:
		{"utf8mb4", "utf8mb4_unicode_ci", str("A"), str("\u0363"), true},
		{"utf8mb4", "utf8mb4_unicode_ci", str("1"), str("⓵"), true},
		{"utf8mb4", "utf8mb4_unicode_ci", str("⑪"), str("⓫"), true},
		{"utf8mb4", "utf8mb4_unicode_ci", str("DZ"), str("ʣ"), true},
		{"utf8mb4", "utf8mb4_unicode_ci", str("ƾ"), str("ʦ"), true},
		{"utf8mb4", "utf8mb4_unicode_ci", str("ͺ"), str("ι"), true},
		{"utf8mb4", "utf8mb4_unicode_ci", str(""), str("\u0345"), true},
		{"utf8mb4", "utf8mb4_general_ci", str("\u0345"), str("ι"), true},
		{"utf8mb4", "utf8mb4_general_ci", str("Σ"), str("ϲ"), true},
		{"utf8mb4", "utf8mb4_unicode_ci", str("\u00b7"), str("\u0387"), true},
		{"utf8mb4", "utf8mb4_unicode_520_ci", str("ll"), str("ŀl"), true},
		{"utf8mb4", "utf8mb4_unicode_520_ci", str("ll"), str("ỻ"), true},
		{"utf8mb4", "utf8mb4_unicode_520_ci", str("6"), str("ↅ"), true},
		{"utf8mb4", "utf8mb4_lithuanian_ci", str("I"), str("y"), true},
		{"utf8mb4", "utf8mb4_lithuanian_ci", str("C"), str("CH"), true},
		{"utf8mb4", "utf8mb4_roman_ci", str("I"), str("j"), true},
		{"utf8mb4", "utf8mb4_roman_ci", str("U"), str("ṿ"), true},
		{"latin1", "latin1_danish_ci", str(`\`), latin1("ø"), true},
		{"latin1", "latin1_danish_ci", str("]"), latin1("Å"), true},
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

// TestFoldTextPrefix: a prefix index compares the first n characters.
func TestFoldTextPrefix(t *testing.T) {
	cases := []struct {
		collation string
		n         int
		a, b      string
		same      bool
	}{
		{"utf8mb4_general_ci", 3, "abcX", "ABCY", true},
		{"utf8mb4_general_ci", 3, "äöüX", "aouY", true},
		{"utf8mb4_general_ci", 3, "ab ", "ab", true},
		{"utf8mb4_general_ci", 3, "abd", "abc", false},
		{"utf8mb4_bin", 2, "a😀x", "a😀y", true},
		{"utf8mb4_bin", 2, "a😀", "a😁", false},
		{"gbk_bin", 2, "abc", "xyz", true}, // undecodable with a prefix: one skeleton
	}
	for _, c := range cases {
		cs, _, _ := strings.Cut(c.collation, "_")
		fa, fb := foldText(str(c.a), cs, c.collation, c.n), foldText(str(c.b), cs, c.collation, c.n)
		if bytes.Equal(fa, fb) != c.same {
			t.Errorf("%s(%d): fold(%q)=%q fold(%q)=%q, want same=%v", c.collation, c.n, c.a, fa, c.b, fb, c.same)
		}
	}
}
