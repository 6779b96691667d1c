package depend

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	xunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
	"golang.org/x/text/unicode/norm"
)

// foldText returns the skeleton of a text value: a byte string such that
// two values equal under the column's collation have equal skeletons. The
// converse need not hold: a skeleton may merge values the collation keeps
// apart (a false conflict only costs parallelism), but must never split
// values the collation merges (a missed conflict corrupts data).
//
// Binary collations ("binary", "*_bin") compare code points, PAD SPACE:
// the skeleton is the value with trailing spaces removed (removing them
// also for NO PAD collations only merges more).
//
// Every other collation gets one universal, deliberately coarse skeleton
// that covers the equivalences of the general_ci, unicode_ci, unicode_520,
// 0900 and uca1400 families and the tailorings that add equivalences the
// plain fold lacks (Swedish/Danish/German: ä=æ=ae, ö=ø=oe, ü=y=ue, å=aa,
// ß=s=ss, v=w; latin1_swedish_ci: '[' = Å, '\' = Ä, ']' = Ö;
// latin1_danish_ci: '\' = Ø, ']' = Å), plus the few tailorings that merge
// letters the others keep apart (lithuanian: y = i, ch = c; roman: j = i,
// v = u). Checked against the server's own unique indexes by
// TestServerUniqueCollisionsHaveEqualKeys:
//
//   - characters no fold or decomposition relates to what the collations
//     weigh them as (charMap: combining Latin letters, double circled
//     numbers, digraph letters, ŀ; U+0345 is ignorable in UCA);
//   - full case folding, then NFKD, twice (ϲ → ς → σ), with
//     nonspacing/enclosing marks, format and control characters and the
//     middle dot dropped (accents, compatibility forms, ignorables);
//   - letters without a decomposition mapped to their base: ø→o, æ→a, œ→o,
//     đ/ð→d, ł→l, ħ→h, ŧ→t, ı→i, and y→u, w→v;
//   - 'e' dropped after a, o or u (ä = ae), runs of one character
//     collapsed (ß = ss = s, å = aa = a);
//   - characters outside the BMP merged into U+FFFD (general_ci and
//     unicode_ci weigh them all alike);
//   - trailing spaces removed.
//
// A charset it cannot decode makes every value of the column one skeleton
// (the index degrades to a table-wide key), unless the collation is binary,
// the charset ASCII-compatible and no prefix is asked for.
//
// prefix > 0 folds only the first prefix characters, as a prefix index
// (UNIQUE KEY (c(prefix))) compares them.
func foldText(b []byte, charset, collation string, prefix int) []byte {
	charset = strings.ToLower(charset)
	collation = strings.ToLower(collation)
	if charset == "" && collation != "" {
		charset, _, _ = strings.Cut(collation, "_")
	}
	binary := collation == "binary" || charset == "binary" || strings.HasSuffix(collation, "_bin")
	dec, ok := decoderFor(charset)
	if !ok {
		if binary && !wideCharset(charset) && prefix == 0 {
			return trimSpaces(b)
		}
		return []byte{0xff} // undecodable: every value is one skeleton
	}
	s := dec(b)
	if prefix > 0 {
		s = firstRunes(s, prefix)
	}
	if binary {
		return []byte(strings.TrimRight(s, " "))
	}
	if charset == "latin1" {
		if strings.HasPrefix(collation, "latin1_danish") {
			s = danish7bit.Replace(s)
		} else {
			s = swedish7bit.Replace(s)
		}
	}
	return []byte(skeleton(s, ucaFamily(charset, collation), tailorings[tailoringName(collation)]))
}

// Old 7-bit national forms that latin1_swedish_ci and latin1_danish_ci
// still sort as letters.
var (
	swedish7bit = strings.NewReplacer("[", "å", `\`, "ä", "]", "ö")
	danish7bit  = strings.NewReplacer("[", "æ", `\`, "ø", "]", "å")
)

// ucaFamily reports collations of the Unicode Collation Algorithm
// (unicode_ci, unicode_520_ci and the language tailorings of the Unicode
// charsets) as opposed to the general_ci family (one weight per
// character, from its upper case form).
func ucaFamily(charset, collation string) bool {
	switch charset {
	case "utf8", "utf8mb3", "utf8mb4", "ucs2", "utf16", "utf16le", "utf32":
		return !strings.Contains(collation, "_general_")
	}
	return false
}

// tailoringName is the language of a tailored collation ("lithuanian" for
// utf8mb4_lithuanian_ci).
func tailoringName(collation string) string {
	parts := strings.Split(collation, "_")
	if len(parts) < 3 {
		return ""
	}
	return parts[1]
}

// tailorings add the equivalences of language tailorings that the
// universal skeleton lacks. They apply to folded text without marks,
// before the letter map (lithuanian y = i must win over y = u).
var tailorings = map[string]*strings.Replacer{
	"lithuanian": strings.NewReplacer("y", "i", "ch", "c"),
	"roman":      strings.NewReplacer("j", "i", "v", "u"),
}

// charMap maps characters that the collations weigh as other characters
// or strings, and that neither case folding nor NFKD relates to them: the
// combining Latin small letters (U+0363-U+036F weigh as their letter),
// double circled and negative circled numbers, digraph letters, middle
// letters (ŀ = l; the middle dot itself is dropped later), ͺ = ι.
var charMap = func() *strings.Replacer {
	var pairs []string
	for i, r := range "aeioucdhmrtvx" {
		pairs = append(pairs, string(rune(0x363+i)), string(r))
	}
	for i := 0; i < 10; i++ {
		pairs = append(pairs, string(rune(0x24F5+i)), strconv.Itoa(i+1), string(rune(0x24EB+i)), strconv.Itoa(i+11))
	}
	pairs = append(pairs, "\u24FF", "0", "\u2185", "6", "\u037A", "ι",
		"ʣ", "dz", "ʤ", "dʒ", "ʥ", "dʑ", "ʦ", "ts", "ʧ", "tʃ", "ʨ", "tɕ", "ʪ", "ls", "ʫ", "lz", "ƾ", "ts",
		"ŀ", "l", "Ŀ", "l", "ỻ", "ll", "Ỻ", "ll")
	return strings.NewReplacer(pairs...)
}()

var folder = cases.Fold()

func skeleton(s string, uca bool, tailor *strings.Replacer) string {
	if !isASCII(s) {
		s = charMap.Replace(s)
		if uca {
			s = strings.ReplaceAll(s, "\u0345", "") // ignorable in UCA; ι in general_ci (case folding)
		}
		// Fold again after NFKD: compatibility forms may decompose to
		// capitals or to forms that fold further (ϲ → ς → σ).
		s = norm.NFKD.String(folder.String(norm.NFKD.String(folder.String(s))))
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		} else if r >= utf8.RuneSelf {
			r = unicode.ToLower(r)
		}
		if r == '·' || unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Cc) {
			continue // marks, ignorables; the middle dot (l· = ŀ = l)
		}
		b.WriteRune(r)
	}
	s = b.String()
	if tailor != nil {
		s = tailor.Replace(s)
	}
	var out []rune
	for _, r := range s {
		switch r {
		case 'ø':
			r = 'o'
		case 'æ':
			r = 'a'
		case 'œ':
			r = 'o'
		case 'đ', 'ð':
			r = 'd'
		case 'ł':
			r = 'l'
		case 'ħ':
			r = 'h'
		case 'ŧ':
			r = 't'
		case 'ı':
			r = 'i'
		case 'y':
			r = 'u'
		case 'w':
			r = 'v'
		}
		if r > 0xFFFF {
			r = utf8.RuneError
		}
		if n := len(out); n > 0 {
			last := out[n-1]
			if r == last || (r == 'e' && (last == 'a' || last == 'o' || last == 'u')) {
				continue
			}
		}
		out = append(out, r)
	}
	return strings.TrimRight(string(out), " ")
}

// firstRunes returns the first n characters of s.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func trimSpaces(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// wideCharset reports charsets whose space is not the single byte 0x20.
func wideCharset(cs string) bool {
	switch cs {
	case "ucs2", "utf16", "utf16le", "utf32":
		return true
	}
	return false
}

// decoderFor returns a function decoding bytes of charset to UTF-8; invalid
// input decodes to U+FFFD, which only merges values.
func decoderFor(cs string) (func([]byte) string, bool) {
	switch cs {
	case "utf8", "utf8mb3", "utf8mb4":
		return func(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }, true
	case "ascii":
		return func(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }, true
	case "latin1": // MySQL's latin1 is cp1252
		return viaEncoding(charmap.Windows1252), true
	case "ucs2", "utf16":
		return viaEncoding(xunicode.UTF16(xunicode.BigEndian, xunicode.IgnoreBOM)), true
	case "utf16le":
		return viaEncoding(xunicode.UTF16(xunicode.LittleEndian, xunicode.IgnoreBOM)), true
	case "utf32":
		return viaEncoding(utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM)), true
	}
	return nil, false
}

func viaEncoding(e encoding.Encoding) func([]byte) string {
	return func(b []byte) string {
		out, err := e.NewDecoder().Bytes(b)
		if err != nil {
			return "\uFFFD"
		}
		return string(out)
	}
}
