package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/snapshot"
	"github.com/prepl/prepl/verify"
)

// exactWorkload holds what LOAD DATA's text could lose: NULL beside the
// empty string and the words NULL and \N, every byte in binary columns,
// tabs, newlines, carriage returns, backslashes and NUL inside strings,
// utf8mb4 beyond the BMP, latin1 bytes that are not UTF-8, zero dates,
// YEAR 0 (0000, where the string '0' is 2000), BIT, an ENUM's error value
// ” (index 0), SET, JSON, a key 0 under AUTO_INCREMENT, generated
// columns; and tables whose keys wait for the rows (KEY, UNIQUE KEY with
// options) or must not (foreign keys, no primary key, a spatial column:
// INSERT literals).
func exactWorkload() []string {
	var all strings.Builder
	for i := 0; i < 256; i++ {
		fmt.Fprintf(&all, "%02X", i)
	}
	return []string{
		"SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'",
		"CREATE DATABASE x",
		`CREATE TABLE x.v (
			id INT NOT NULL AUTO_INCREMENT,
			vc VARCHAR(200), tx TEXT, l1 VARCHAR(50) CHARACTER SET latin1, c CHAR(5),
			vb VARBINARY(300), bl BLOB, bn BINARY(4),
			i BIGINT UNSIGNED, de DECIMAL(30,10), f FLOAT, dbl DOUBLE,
			b1 BIT(1), b64 BIT(64), e ENUM('a','b','ü'), s SET('x','y','ö'), j JSON,
			da DATE, dt DATETIME(6), ts TIMESTAMP(6) NULL DEFAULT NULL, tm TIME(6), y YEAR,
			g BIGINT AS (i DIV 2) VIRTUAL, gs VARCHAR(210) AS (CONCAT(vc, '!')) STORED,
			PRIMARY KEY (id),
			UNIQUE KEY u_vc (vc(20), id) COMMENT 'unique, with a prefix',
			KEY k_i (i),
			KEY ` + "`k``odd`" + ` (dt, y) USING BTREE
		) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`,
		`INSERT INTO x.v (id, vc, tx, l1, c, vb, bl, bn, i, de, f, dbl, b1, b64, e, s, j, da, dt, ts, tm, y) VALUES
			(0, 'tab\there', 'line\nbreak\r\nend\\', CONCAT('caf', X'E9', X'81', X'80'), 'a b', X'` + all.String() + `', X'` + all.String() + `', X'00000000',
			 18446744073709551615, '-12345678901234567890.0123456789', 0.1, 0.1, 1, 18446744073709551615, 'ü', 'x,ö', '{"a": "\\t\\n", "ü": [1, 2.5]}',
			 '0000-00-00', '0000-00-00 00:00:00', '1970-01-01 00:00:01', '-838:59:59', 0),
			(1, '\\N', 'NULL', '', '', '', '', X'5C4E0909', 0, 0, -0.0, 1e308, 0, 0, '', '', '[]',
			 '2024-02-29', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999999', '838:59:59.999999', 2000),
			(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
			(3, '😀 emoji', CONCAT('nul', X'00', 'inside'), 'plain', 'ü', X'0A09005C', X'', X'0D0A0000', 42, 1, 3.4028235e38, -1.7976931348623157e308, 0, 5, 'a', 'y', 'null',
			 '1000-01-01', '2000-01-01 00:00:00.5', NULL, '-00:00:00.000001', 1901),
			(4, 'x', 'y', 'z', 'w', X'00', X'FF', X'FF', 7, 7, 7, 7, 1, 7, 'b', 'x,y,ö', '"s"', '2000-02-30', NULL, NULL, NULL, 2155)`,
		// More rows in x.v than in the rest: it is cut in parts copied in parallel.
		"INSERT INTO x.v (id, vc, i, y) SELECT seq, CONCAT('row\t', seq), seq, seq % 100 FROM x.seq_10_to_50",
		`CREATE TABLE x.parent (id INT PRIMARY KEY, u VARCHAR(10), UNIQUE KEY u (u), KEY k (u, id)) ENGINE=InnoDB`,
		`CREATE TABLE x.child (id INT PRIMARY KEY, p VARCHAR(10), KEY p (p), CONSTRAINT fk FOREIGN KEY (p) REFERENCES x.parent (u)) ENGINE=InnoDB`,
		"INSERT INTO x.parent VALUES (1, 'a'), (2, 'b'), (3, NULL)",
		"INSERT INTO x.child VALUES (1, 'a'), (2, 'b'), (3, 'a'), (4, NULL)",
		`CREATE TABLE x.nopk (a INT NOT NULL, b VARCHAR(10), UNIQUE KEY a (a), KEY b (b)) ENGINE=InnoDB`,
		"INSERT INTO x.nopk VALUES (3, 'c\\td'), (1, NULL), (2, '')",
		`CREATE TABLE x.ai (a INT NOT NULL, id INT NOT NULL AUTO_INCREMENT, PRIMARY KEY (a, id), KEY id (id)) ENGINE=InnoDB`,
		"INSERT INTO x.ai VALUES (1, 1), (1, 2), (2, 3)",
		// Types of MariaDB's type plugins, which no kind covers: copied as their text.
		`CREATE TABLE x.plug (id INT PRIMARY KEY, i6 INET6, i4 INET4, u UUID, KEY i6 (i6)) ENGINE=InnoDB`,
		"INSERT INTO x.plug VALUES (1, '::1', '10.0.0.1', '123e4567-e89b-12d3-a456-426655440000'), (2, '2001:db8::ff00:42:8329', '255.255.255.255', '00000000-0000-0000-0000-000000000000'), (3, NULL, NULL, NULL)",
		`CREATE TABLE x.wide (id INT PRIMARY KEY, u16 VARCHAR(10) CHARACTER SET utf16, u32 TEXT CHARACTER SET utf32,
			u2 CHAR(3) CHARACTER SET ucs2, KEY u16 (u16)) ENGINE=InnoDB`,
		"INSERT INTO x.wide VALUES (1, CONCAT('a', CHAR(9), 'b😀'), CONCAT(CHAR(10), CHAR(92)), CHAR(9)), (2, NULL, '', 'ü')",
		`CREATE TABLE x.geo (id INT PRIMARY KEY, p POINT, t VARCHAR(10), KEY t (t)) ENGINE=InnoDB`,
		"INSERT INTO x.geo VALUES (1, POINT(1.5, -2), 'a\\tb'), (2, NULL, NULL)",
	}
}

func startSource(t *testing.T, stmts ...string) *sandbox.Server {
	o := sandbox.Defaults()
	o.Binlog = true
	src := sandbox.MustStart(t, o)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, stmts...)
	return src
}

func sourceEndpoint(t *testing.T, src *sandbox.Server) Endpoint {
	e, err := ParseURL(src.URL())
	if err == nil {
		e, err = e.WithDefaults()
	}
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func openCopy(t *testing.T, tgt *sandbox.Server) *CopyTarget {
	m, err := OpenCopy(context.Background(), tgt.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// sameTables fails unless every table of src is on tgt with the same
// rows (verify.Rows: values as bytes) and the same SHOW CREATE TABLE.
func sameTables(t *testing.T, src, tgt *sandbox.Server) {
	t.Helper()
	sdb, tdb := sandbox.MustOpen(t, src, ""), sandbox.MustOpen(t, tgt, "")
	if err := verify.Rows(context.Background(), sdb, tdb); err != nil {
		t.Fatalf("target differs from source: %v", err)
	}
	names, err := verify.Tables(context.Background(), sdb)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		s, d := showCreate(t, sdb, n), showCreate(t, tdb, n)
		if s != d {
			t.Errorf("%s on target:\n%s\nsource:\n%s", n, d, s)
		}
	}
	var waiting int
	if err := tdb.QueryRow("SELECT COUNT(*) FROM prepl.copy_keys").Scan(&waiting); err != nil || waiting != 0 {
		t.Errorf("prepl.copy_keys after the copy: %d rows, %v", waiting, err)
	}
}

func showCreate(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	s, n, _ := strings.Cut(table, ".")
	var name, create string
	if err := db.QueryRow("SHOW CREATE TABLE "+QuoteIdent(s)+"."+QuoteIdent(n)).Scan(&name, &create); err != nil {
		t.Fatal(err)
	}
	return create
}

// The copy into MySQL/MariaDB keeps every value and definition, by LOAD
// DATA (the default where the server allows local_infile) and by INSERT
// literals, its keys added after the rows or not, in chunks of 2 rows
// split over parts.
func TestMySQLCopyExact(t *testing.T) {
	src := startSource(t, exactWorkload()...)
	for _, tc := range []struct {
		name                   string
		loadData, keysAtCreate bool
	}{
		{"load data, keys after", true, false},
		{"insert, keys at create", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tgt := sandbox.MustStart(t, sandbox.Defaults())
			m := openCopy(t, tgt)
			if tc.loadData && !m.loadData {
				t.Fatal("the target sandbox refuses LOAD DATA LOCAL INFILE: this case would test INSERT")
			}
			m.loadData, m.keysAtCreate = tc.loadData, tc.keysAtCreate
			if _, err := snapshot.Run(context.Background(), snapshot.Config{ParseTable: postgres.ParseCreateTable, Source: sourceEndpoint(t, src), Target: m, Channel: "default", Workers: 3, ChunkRows: 2}); err != nil {
				t.Fatal(err)
			}
			sameTables(t, src, tgt)
		})
	}
}

// A copy killed after creating a table without its keys adds them when
// it resumes; a table that was on the target before the copy keeps its
// own definition.
func TestMySQLCopyKeysAfterResume(t *testing.T) {
	src := startSource(t, exactWorkload()...)
	tgt := sandbox.MustStart(t, sandbox.Defaults())
	tdb := sandbox.MustOpen(t, tgt, "")
	m := openCopy(t, tgt)
	ctx := context.Background()
	if err := m.Prepare(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	create := showCreate(t, sandbox.MustOpen(t, src, ""), "x.v")
	def, err := postgres.ParseCreateTable(create, "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CreateTable(ctx, "default", def, create); err != nil {
		t.Fatal(err)
	}
	// Killed here: the table is there with its primary key only.
	if got := indexes(t, tdb, "x", "v"); !reflect.DeepEqual(got, []string{"PRIMARY"}) {
		t.Fatalf("x.v created with keys %v, want the primary key only until its rows are in", got)
	}
	m.Close()
	m = openCopy(t, tgt)
	if _, err := snapshot.Run(ctx, snapshot.Config{ParseTable: postgres.ParseCreateTable, Source: sourceEndpoint(t, src), Target: m, Channel: "default", Workers: 2, ChunkRows: 2}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, src, tgt)

	// A table the user created beforehand, with fewer keys: left as it is.
	src2 := startSource(t, "CREATE DATABASE y", "CREATE TABLE y.t (id INT PRIMARY KEY, a INT, KEY a (a)) ENGINE=InnoDB", "INSERT INTO y.t VALUES (1, 1)")
	tgt2 := sandbox.MustStart(t, sandbox.Defaults())
	sandbox.MustExec(t, sandbox.MustOpen(t, tgt2, ""), "CREATE DATABASE y", "CREATE TABLE y.t (id INT PRIMARY KEY, a INT) ENGINE=InnoDB")
	if _, err := snapshot.Run(ctx, snapshot.Config{ParseTable: postgres.ParseCreateTable, Source: sourceEndpoint(t, src2), Target: openCopy(t, tgt2), Channel: "default"}); err != nil {
		t.Fatal(err)
	}
	if got := indexes(t, sandbox.MustOpen(t, tgt2, ""), "y", "t"); !reflect.DeepEqual(got, []string{"PRIMARY"}) {
		t.Errorf("a table there before the copy got keys %v, want its own (PRIMARY)", got)
	}
}

func indexes(t *testing.T, db *sql.DB, schema, table string) []string {
	t.Helper()
	rows, err := db.Query("SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY INDEX_NAME", schema, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		out = append(out, n)
	}
	return out
}

// A row already on the target under a copied key fails the copy, by
// LOAD DATA as by INSERT: LOCAL makes the server skip a duplicate with a
// warning, and the rows affected must say so.
func TestMySQLCopyDuplicateFails(t *testing.T) {
	src := startSource(t, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB",
		"INSERT INTO d.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	for _, load := range []bool{true, false} {
		t.Run(fmt.Sprintf("loadData=%v", load), func(t *testing.T) {
			tgt := sandbox.MustStart(t, sandbox.Defaults())
			sandbox.MustExec(t, sandbox.MustOpen(t, tgt, ""), "CREATE DATABASE d",
				"CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB", "INSERT INTO d.t VALUES (2, 'old')")
			m := openCopy(t, tgt)
			m.loadData = load
			_, err := snapshot.Run(context.Background(), snapshot.Config{ParseTable: postgres.ParseCreateTable, Source: sourceEndpoint(t, src), Target: m, Channel: "default"})
			if err == nil {
				t.Fatal("copy over a row already on the target succeeded")
			}
			var n int
			sandbox.MustOpen(t, tgt, "").QueryRow("SELECT COUNT(*) FROM d.t").Scan(&n)
			if n != 1 {
				t.Errorf("%d rows on target after the failed chunk, want the 1 that was there: %v", n, err)
			}
		})
	}
}

func TestAppendField(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want string
	}{
		{nil, `\N`},
		{[]byte{}, ``},
		{[]byte(`\N`), `\\N`},
		{[]byte("NULL"), `NULL`},
		{[]byte("a\tb\nc\rd\x00e\\f"), `a\tb\nc\rd\0e\\f`},
		{[]byte("\xff\xfe😀"), "\xff\xfe😀"},
	} {
		if got := string(appendField(nil, tc.in)); got != tc.want {
			t.Errorf("appendField(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSplitKeys(t *testing.T) {
	create := "CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `a` varchar(10) DEFAULT 'KEY `x`',\n  PRIMARY KEY (`id`),\n" +
		"  UNIQUE KEY `a` (`a`) COMMENT 'c',\n  KEY `b``c` (`a`,`id`),\n  FULLTEXT KEY `ft` (`a`),\n  CONSTRAINT `ck` CHECK (`id` > 0)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	table, keys, ok := splitKeys(create)
	wantTable := "CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `a` varchar(10) DEFAULT 'KEY `x`',\n  PRIMARY KEY (`id`),\n" +
		"  FULLTEXT KEY `ft` (`a`),\n  CONSTRAINT `ck` CHECK (`id` > 0)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	if !ok || table != wantTable || !reflect.DeepEqual(keys, []string{"UNIQUE KEY `a` (`a`) COMMENT 'c'", "KEY `b``c` (`a`,`id`)"}) {
		t.Errorf("splitKeys: %v\n%s\n%q", ok, table, keys)
	}
	if n := keyName(keys[1]); n != "b`c" {
		t.Errorf("keyName(%q) = %q", keys[1], n)
	}
	for _, c := range []string{
		"CREATE TABLE `t` (\n  `id` int NOT NULL,\n  KEY `id` (`id`)\n) ENGINE=InnoDB",                       // no primary key
		"CREATE TABLE `t` (\n  `id` int NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB",                    // nothing to defer
		"CREATE TABLE `t` (\n  `id` int NOT NULL,\n  PRIMARY KEY (`id`),\n  KEY `a` (`id`)\n) ENGINE=MyISAM", // not InnoDB
	} {
		if _, _, ok := splitKeys(c); ok {
			t.Errorf("splitKeys deferred keys of\n%s", c)
		}
	}
}
