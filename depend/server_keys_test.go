package depend_test

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// The property, asked of the server itself: whenever two values collide in
// a server's unique index, prepl's keys for them are equal. For each case
// (a column type, charset, collation, prefix length), the values are
// inserted into a table without a unique key, then copied into one with
// the unique key, each colliding value noted on the row it collides with
// (ON DUPLICATE KEY UPDATE): the index's own classes. The values are read
// back from the binlog, as prepl sees them, and every member of a class
// must get the same keys from depend.Keys, with the table definition read
// by the target catalog.

type keyCase struct {
	colType string // column type, with charset and collation for text
	prefix  int    // UNIQUE KEY (v(prefix)); 0 for the whole column
	values  []string
	// hexValues: values are byte strings (binary types, or raw bytes of
	// the column's charset) rather than UTF-8 text to convert.
	hexValues bool
}

// textValues: single characters of the scripts and blocks where
// collations merge things (Latin, IPA, combining marks, Greek, Cyrillic,
// punctuation and letterlike symbols, enclosed and full-width forms,
// ligatures, emoji, controls), tricky words, and random mixes of pieces
// that differ in case, accents, spacing and spelling.
func textValues(rng *rand.Rand) []string {
	var out []string
	for _, r := range [][2]rune{{0x01, 0x7e}, {0x80, 0x2af}, {0x300, 0x36f}, {0x370, 0x3ff}, {0x400, 0x45f},
		{0x1e00, 0x1eff}, {0x2000, 0x206f}, {0x20a0, 0x20bf}, {0x2100, 0x218f}, {0x2460, 0x24ff},
		{0xfb00, 0xfb06}, {0xfe00, 0xfe0f}, {0xff01, 0xff5e}, {0x1f600, 0x1f60f}, {0x10400, 0x10427}} {
		for c := r[0]; c <= r[1]; c++ {
			out = append(out, string(c))
		}
	}
	words := []string{"strasse", "straße", "STRASSE", "Straße ", "ae", "æ", "Æ", "AE", "oe", "œ", "Œ", "ø", "ö", "aa", "å", "Å",
		"ss", "ß", "ẞ", "ſs", "ﬀ", "ff", "ﬁ", "fi", "I", "ı", "İ", "i", "i̇", "e\u0301", "é", "É", "E", "ℌ", "H", "abc", "abc ",
		"abc\t", "abc  ", "Abc", "ＡＢＣ", "ａｂｃ", "ab\u200bc", "ab\u00adc", "a😀", "a😁", "a😀 ", "ü", "ue", "y", "u", "w", "v",
		"ð", "d", "đ", "þ", "th", "ŀl", "l·l", "ll", "ch", "c", "h", "cs", "dz", "ǆ", "ǅ", "Ǆ", "ij", "ĳ", "ŉ", "ʼn", "ᵃ", "ª", "º",
		"²", "2", "½", "1/2", "ⅻ", "xii", "Ⅻ", "ﾊ", "ハ", "ｶﾞ", "ガ", " ", "", "\t", " \t", "\x00", "a\x00", "ą", "ł", "l", "ñ", "n~",
		"ğ", "ş", "ç", "Ğ", "Ş", "Ç", "ï", "Ï", "ÿ", "Ÿ", "ё", "е", "Ё", "й", "и", "ς", "σ", "Σ", "ά", "α", "ΐ", "ι"}
	out = append(out, words...)
	pieces := append(slices.Clone(words), "a", "b", "s", "o", "e", "A", "S", "O", " ", "  ", "\u0308", "\u0301", "\u0327")
	for range 800 {
		var b strings.Builder
		for k := 1 + rng.Intn(3); k > 0; k-- {
			p := pieces[rng.Intn(len(pieces))]
			switch rng.Intn(4) {
			case 0:
				p = strings.ToUpper(p)
			case 1:
				p = strings.ToLower(p)
			}
			b.WriteString(p)
		}
		out = append(out, b.String())
	}
	return dedupe(out)
}

// latin1Bytes: every byte, and random strings of bytes 0x20-0xff.
func latin1Bytes(rng *rand.Rand) []string {
	var out []string
	for c := 1; c < 256; c++ {
		out = append(out, string([]byte{byte(c)}))
	}
	for range 800 {
		b := make([]byte, 1+rng.Intn(4))
		for i := range b {
			b[i] = byte(0x20 + rng.Intn(0xe0))
			if rng.Intn(3) == 0 {
				b[i] = " aAeEsS"[rng.Intn(7)]
			}
		}
		out = append(out, string(b))
	}
	return dedupe(out)
}

func binaryValues(rng *rand.Rand) []string {
	out := []string{"", "\x00", "\x00\x00", "a", "a\x00", "a\x00\x00", "a ", "a  ", "A", "abc", "abcX", "abcY", "abc\x00", "ab", "ab "}
	for range 500 {
		b := make([]byte, rng.Intn(6))
		for i := range b {
			b[i] = "\x00 aAbc\xff\xc3\xa4"[rng.Intn(9)]
		}
		out = append(out, string(b))
	}
	return dedupe(out)
}

// quoted makes SQL string literals of vs.
func quoted(vs ...string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = "'" + v + "'"
	}
	return out
}

func dedupe(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

func keyCases(rng *rand.Rand, collations []string) []keyCase {
	text, lat := textValues(rng), latin1Bytes(rng)
	var cs []keyCase
	for _, co := range collations {
		charset, _, _ := strings.Cut(co, "_")
		ct := fmt.Sprintf("VARCHAR(24) CHARACTER SET %s COLLATE %s", charset, co)
		cs = append(cs, keyCase{colType: ct, values: text})
		switch charset {
		case "latin1":
			cs = append(cs, keyCase{colType: ct, values: lat, hexValues: true}, keyCase{colType: ct, values: lat, hexValues: true, prefix: 2})
		case "utf8mb4":
			cs = append(cs, keyCase{colType: ct, values: text, prefix: 2})
		}
	}
	cs = append(cs,
		keyCase{colType: "CHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", values: text},
		keyCase{colType: "CHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", values: text},
		keyCase{colType: "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", values: text, prefix: 3},
		keyCase{colType: "VARBINARY(10)", values: binaryValues(rng), hexValues: true},
		keyCase{colType: "VARBINARY(10)", values: binaryValues(rng), hexValues: true, prefix: 3},
		keyCase{colType: "BINARY(5)", values: binaryValues(rng), hexValues: true},
		keyCase{colType: "BINARY(5)", values: binaryValues(rng), hexValues: true, prefix: 2},
		keyCase{colType: "BLOB", values: binaryValues(rng), hexValues: true, prefix: 2},
		keyCase{colType: "DECIMAL(10,3)", values: quoted("1", "1.0", "1.00", "1.000", "01.0", "-0", "0", "0.000", "-0.000", "+1", "1.0004", "1.0005", "-1.5", "-1.50", "999.9", "1e2", "100")},
		keyCase{colType: "DECIMAL(10,0) UNSIGNED", values: quoted("1", "1.0", "1.4", "2", "0", "-0")},
		keyCase{colType: "DOUBLE", values: quoted("0", "-0", "0.0", "1", "1.0", "1e0", "0.1", "0.10", "1e308", "-1e-308", "3.0000000000000001", "3")},
		keyCase{colType: "FLOAT", values: quoted("0", "-0", "1", "1.0000001", "1.00000001", "0.1", "0.1000000001", "16777217", "16777216")},
		keyCase{colType: "DATETIME(3)", values: quoted("2020-01-01 00:00:00", "2020-01-01 00:00:00.000", "2020-01-01 00:00:00.0001", "2020-01-01 00:00:00.1", "2020-01-01 00:00:00.100", "2020-01-01", "0000-00-00 00:00:00", "2020-01-01 00:00:00.0005")},
		keyCase{colType: "DATETIME", values: quoted("2020-01-01 00:00:00", "2020-01-01 00:00:00.4", "2020-01-01 00:00:00.6", "2020-01-01 00:00:01")},
		keyCase{colType: "TIMESTAMP(6) NULL", values: quoted("2020-01-01 00:00:00", "2020-01-01 00:00:00.000000", "2020-01-01 00:00:00.5", "2020-01-01 00:00:00.500000", "1970-01-01 00:00:01")},
		keyCase{colType: "TIME(2)", values: quoted("00:00:00", "-00:00:00", "00:00:00.00", "00:00:00.001", "10:00:00.5", "10:00:00.50", "-10:00:00.5", "838:59:59", "1 10:00:00", "34:00:00")},
		keyCase{colType: "DATE", values: quoted("2020-01-01", "2020-1-1", "20200101", "0000-00-00")},
		keyCase{colType: "YEAR", values: quoted("2020", "20", "1999", "99", "0")},
		keyCase{colType: "ENUM('a','b','ä ','Ç') CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", values: quoted("a", "b", "ä ", "ä", "Ç", "1", "2")},
		keyCase{colType: "SET('a','b','c')", values: quoted("a", "a,b", "b,a", "a,a", "", "c,b,a", "3", "7")},
		keyCase{colType: "BIT(8)", values: []string{"0", "1", "255", "b'1'", "b'00000001'"}},
		keyCase{colType: "INT UNSIGNED", values: quoted("0", "1", "4294967295", "2147483648", "-0")},
		keyCase{colType: "BIGINT UNSIGNED", values: quoted("0", "18446744073709551615", "9223372036854775808", "1")},
		keyCase{colType: "TINYINT", values: quoted("-128", "127", "0", "-0", "1")},
		keyCase{colType: "MEDIUMINT UNSIGNED", values: quoted("16777215", "8388608", "0")},
	)
	return cs
}

func TestServerUniqueCollisionsHaveEqualKeys(t *testing.T) {
	o := sandbox.Defaults()
	o.Binlog = true
	srv := sandbox.MustStart(t, o)
	db := sandbox.MustOpen(t, srv, "")
	db.SetMaxOpenConns(1) // one session: its sql_mode and settings hold
	ctx := context.Background()
	sandbox.MustExec(t, db, "CREATE DATABASE k", "SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'")

	var collations []string
	rows, err := db.Query(`SELECT COLLATION_NAME FROM information_schema.COLLATIONS
		WHERE CHARACTER_SET_NAME IN ('utf8mb4', 'latin1', 'ascii')
		   OR COLLATION_NAME IN ('utf8mb3_general_ci', 'utf8mb3_unicode_ci', 'utf8mb3_general_mysql500_ci', 'utf8mb3_bin',
		      'ucs2_general_ci', 'ucs2_unicode_ci', 'utf16_general_ci', 'utf16_unicode_520_ci', 'utf16_bin')
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		collations = append(collations, c)
	}
	rows.Close()

	rng := rand.New(rand.NewSource(1))
	cases := keyCases(rng, collations)
	cat := catalog{}
	classes := make([]map[int64]int64, len(cases)) // per case: id -> class
	for i, c := range cases {
		classes[i] = loadCase(t, ctx, db, i, c, cat)
	}

	sandbox.MustExec(t, db, "FLUSH BINARY LOGS")
	files, err := srv.BinlogFiles()
	if err != nil {
		t.Fatal(err)
	}
	r, err := fileset.Open(files, fileset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := make([]map[int64]*txn.RowChange, len(cases))
	for i := range seen {
		seen[i] = map[int64]*txn.RowChange{}
	}
	for {
		tx, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range tx.Changes {
			var i int
			if ch.Row == nil || ch.Row.Kind != txn.Insert {
				continue
			}
			if _, err := fmt.Sscanf(ch.Row.Table.Name, "v%d", &i); err != nil {
				continue
			}
			seen[i][ch.Row.After[0].(int64)] = ch.Row
		}
	}

	var pairs, equal, failures int
	for i, c := range cases {
		keyOf := map[int64]string{}
		for id, rc := range seen[i] {
			keyOf[id] = keysOf(t, rc, cat)
		}
		first := map[int64]int64{} // class -> first id
		bad := 0
		n := len(seen[i])
		pairs += n * (n - 1) / 2
		size := map[int64]int{}
		for id, cl := range classes[i] {
			size[cl]++
			f, ok := first[cl]
			if !ok || id < f {
				first[cl] = id
			}
		}
		for _, k := range size {
			equal += k * (k - 1) / 2
		}
		for id, cl := range classes[i] {
			f := first[cl]
			if keyOf[id] != keyOf[f] {
				bad++
				if bad <= 5 {
					t.Errorf("%s prefix %d: the server's unique key merges %s and %s, prepl's keys differ",
						c.colType, c.prefix, show(seen[i][f].After[1]), show(seen[i][id].After[1]))
				}
			}
		}
		failures += bad
		if bad > 5 {
			t.Errorf("%s prefix %d: %d more", c.colType, c.prefix, bad-5)
		}
		distinct := map[string]bool{}
		for _, k := range keyOf {
			distinct[k] = true
		}
		t.Logf("%s prefix %d: %d values, %d server classes, %d prepl keys", c.colType, c.prefix, n, len(size)+countNulls(seen[i]), len(distinct))
	}
	t.Logf("%d cases, %d value pairs compared by the server, %d of them equal; %d values with keys apart from their class", len(cases), pairs, equal, failures)
}

func countNulls(rows map[int64]*txn.RowChange) int {
	n := 0
	for _, rc := range rows {
		if rc.After[1] == nil {
			n++
		}
	}
	return n
}

// loadCase creates k.vI (the values, no unique key) and k.uI (the unique
// key), checks that the server's classes of k.vI are those of the unique
// key, and returns them. cat gets k.vI with the definition of k.uI.
func loadCase(t *testing.T, ctx context.Context, db *sql.DB, i int, c keyCase, cat catalog) map[int64]int64 {
	t.Helper()
	v, u := fmt.Sprintf("v%d", i), fmt.Sprintf("u%d", i)
	col := "v"
	if c.prefix > 0 {
		col = fmt.Sprintf("v(%d)", c.prefix)
	}
	sandbox.MustExec(t, db,
		fmt.Sprintf("CREATE TABLE k.%s (id INT PRIMARY KEY, v %s NULL)", v, c.colType),
		fmt.Sprintf("CREATE TABLE k.%s (id INT PRIMARY KEY, v %s NULL, dups TEXT, UNIQUE KEY uv (%s))", u, c.colType, col))
	for start := 0; start < len(c.values); start += 200 {
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT IGNORE INTO k.%s VALUES ", v)
		for j, val := range c.values[start:min(start+200, len(c.values))] {
			if j > 0 {
				b.WriteString(",")
			}
			id := start + j + 1
			switch {
			case c.hexValues && val == "":
				fmt.Fprintf(&b, "(%d, '')", id)
			case c.hexValues:
				fmt.Fprintf(&b, "(%d, X'%s')", id, hex.EncodeToString([]byte(val)))
			case strings.Contains(c.colType, "CHAR") || strings.Contains(c.colType, "TEXT"):
				if !utf8.ValidString(val) {
					t.Fatalf("invalid text value %q", val)
				}
				fmt.Fprintf(&b, "(%d, _utf8mb4 X'%s')", id, hex.EncodeToString([]byte(val)))
			default: // an SQL literal
				fmt.Fprintf(&b, "(%d, %s)", id, val)
			}
		}
		sandbox.MustExec(t, db, b.String())
	}
	// Each value goes into the unique key; one that collides is noted on
	// the row it collides with.
	sandbox.MustExec(t, db, fmt.Sprintf(`INSERT INTO k.%s (id, v) SELECT id, v FROM k.%s ORDER BY id
		ON DUPLICATE KEY UPDATE dups = CONCAT_WS(',', dups, VALUES(id))`, u, v))
	rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT id, COALESCE(dups, '') FROM k.%s WHERE v IS NOT NULL", u))
	if err != nil {
		t.Fatal(err)
	}
	classes := map[int64]int64{}
	for rows.Next() {
		var id int64
		var dups string
		if err := rows.Scan(&id, &dups); err != nil {
			t.Fatal(err)
		}
		classes[id] = id
		for _, d := range strings.Split(dups, ",") {
			if d != "" {
				var x int64
				fmt.Sscan(d, &x)
				classes[x] = id
			}
		}
	}
	rows.Close()
	d, err := mysql.LoadTableDef(ctx, db, "k", u)
	d.Columns = d.Columns[:2] // dups is not in k.vI
	if err != nil {
		t.Fatal(err)
	}
	d.Name = v
	cat[fmt.Sprintf("k.%s", v)] = d
	return classes
}

// keysOf is the writeset of an insert of rc's value under primary key 1:
// its keys differ only by the unique key's.
func keysOf(t *testing.T, rc *txn.RowChange, cat catalog) string {
	after := []txn.Value{int64(1), rc.After[1]}
	tx := &txn.Txn{Seq: 1, Changes: []txn.Change{{Row: &txn.RowChange{Kind: txn.Insert, Table: rc.Table, After: after, AfterCols: []bool{true, true}}}}}
	locks, why := depend.Keys(tx, cat)
	if why != depend.ReasonNone {
		t.Fatalf("%s: barrier %s", rc.Table.Name, why)
	}
	var ks []string
	for _, l := range locks {
		if !l.Shared {
			ks = append(ks, fmt.Sprint(l.Key))
		}
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}

func show(v txn.Value) string {
	if b, ok := v.([]byte); ok {
		return fmt.Sprintf("%q (%x)", b, b)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

type catalog map[string]*txn.TableDef

func (c catalog) Table(schema, name string) (*txn.TableDef, bool) {
	d, ok := c[schema+"."+name]
	return d, ok
}
