package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
	"github.com/prepl/prepl/verify"
)

// fixtureDir holds binlogs written by real MySQL servers (see its README);
// the tests read them in place.
const fixtureDir = "/work/shared/fixtures/mysql/"

// mariadbBinlogInto pipes `mariadb-binlog ARGS FILES` into `mariadb` on s:
// the reference for what replaying a binlog means. It returns the
// decoder's output (for the GTIDs it selected) and the first error.
func mariadbBinlogInto(t *testing.T, s *sandbox.Server, args []string, files ...string) (string, error) {
	t.Helper()
	return mariadbBinlogEdited(t, s, nil, args, files...)
}

// mariadbBinlogEdited is mariadbBinlogInto with the script edited before
// the client runs it (nil: as printed).
func mariadbBinlogEdited(t *testing.T, s *sandbox.Server, edit func(string) string, args []string, files ...string) (string, error) {
	t.Helper()
	dec := exec.Command("mariadb-binlog", append(append([]string{"--no-defaults"}, args...), files...)...)
	var script, decErr bytes.Buffer
	dec.Stdout, dec.Stderr = &script, &decErr
	if err := dec.Run(); err != nil {
		return script.String(), fmt.Errorf("mariadb-binlog: %v: %s", err, strings.TrimSpace(decErr.String()))
	}
	if s == nil {
		return script.String(), nil
	}
	text := script.String()
	if edit != nil {
		text = edit(text)
	}
	cl := exec.Command("mariadb", "--no-defaults", "-uroot", "-S", s.Socket)
	var out bytes.Buffer
	cl.Stdin, cl.Stdout, cl.Stderr = strings.NewReader(text), &out, &out
	if err := cl.Run(); err != nil {
		return script.String(), fmt.Errorf("mariadb: %v: %s", err, strings.TrimSpace(out.String()))
	}
	return script.String(), nil
}

// dropUserSchemas empties a target: every non-system schema, prepl's too.
func dropUserSchemas(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN ('mysql','information_schema','performance_schema','sys')")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		sandbox.MustExec(t, db, "DROP DATABASE `"+n+"`")
	}
}

var createTableRe = regexp.MustCompile("(?i)^\\s*create\\s+table\\s+(?:if\\s+not\\s+exists\\s+)?`?(\\w+)`?(?:\\.`?(\\w+)`?)?")

// missingTables reads a fixture and returns the DDL of the tables its row
// events write but that none of its statements creates: the tables the
// server had before the file began. Their columns follow the table map
// (types and lengths that keep the binlog's row format: VARBINARY for
// VARCHAR, so both replays store the same bytes); the first column is the
// primary key unless the binlog's metadata names one.
//
// It also returns the rows the file updates or deletes without inserting
// them first (their first before image): the rows those tables held.
func missingTables(t *testing.T, file string) ([]string, []seedRow) {
	t.Helper()
	rd, err := fileset.Open([]string{file}, fileset.Options{Limits: binlog.Limits{MaxEvent: 1 << 30, MaxTxn: 1 << 32}})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	created := map[string]bool{}
	written := map[string]*txn.Table{}
	present, seen := map[string]bool{}, map[string]bool{}
	var seeds []seedRow
	for {
		tx, err := rd.Next(context.Background())
		if errors.Is(err, io.EOF) || errors.Is(err, binlog.ErrIncomplete) {
			break
		}
		if err != nil {
			t.Fatalf("read %s: %v", file, err)
		}
		for _, c := range tx.Changes {
			if c.Stmt != nil {
				if m := createTableRe.FindStringSubmatch(c.Stmt.SQL); m != nil {
					if m[2] != "" {
						created[m[1]+"."+m[2]] = true
					} else {
						created[c.Stmt.Schema+"."+m[1]] = true
					}
				}
			}
			if r := c.Row; r != nil {
				written[r.Table.QualifiedName()] = r.Table
				if r.Before != nil {
					k := rowKey(r.Table, r.Before)
					if !seen[k] {
						seeds = append(seeds, seedRow{r.Table, r.Before})
					}
					seen[k], present[k] = true, false
				}
				if r.After != nil {
					k := rowKey(r.Table, r.After)
					seen[k], present[k] = true, true
				}
			}
		}
	}
	var names []string
	var keep []seedRow
	for _, sr := range seeds {
		if !created[sr.table.QualifiedName()] {
			keep = append(keep, sr)
		}
	}
	for n := range written {
		if !created[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var ddl []string
	for _, n := range names {
		tb := written[n]
		ddl = append(ddl, "CREATE DATABASE IF NOT EXISTS `"+tb.Schema+"`", tableDDL(t, tb))
	}
	return ddl, keep
}

type seedRow struct {
	table *txn.Table
	row   []txn.Value
}

func keyCols(tb *txn.Table) []int {
	if tb.PrimaryKey != nil {
		return tb.PrimaryKey
	}
	return []int{0}
}

func rowKey(tb *txn.Table, row []txn.Value) string {
	k := tb.QualifiedName()
	for _, c := range keyCols(tb) {
		k += fmt.Sprintf("\x00%v", row[c])
	}
	return k
}

// seedRows inserts rows as the source held them (TIMESTAMPs are UTC).
func seedRows(t *testing.T, db *sql.DB, rows []seedRow) {
	t.Helper()
	if len(rows) == 0 {
		return
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "SET time_zone = '+00:00'"); err != nil {
		t.Fatal(err)
	}
	for _, sr := range rows {
		args := make([]any, len(sr.row))
		marks := make([]string, len(sr.row))
		for i, v := range sr.row {
			marks[i] = "?"
			switch x := v.(type) {
			case txn.Decimal:
				args[i] = string(x)
			case txn.Temporal:
				args[i] = string(x)
			case txn.Bit:
				args[i] = uint64(x)
			default:
				args[i] = x
			}
		}
		q := fmt.Sprintf("INSERT INTO `%s`.`%s` VALUES (%s)", sr.table.Schema, sr.table.Name, strings.Join(marks, ","))
		if _, err := conn.ExecContext(context.Background(), q, args...); err != nil {
			t.Fatalf("seed %s: %v", q, err)
		}
	}
}

func tableDDL(t *testing.T, tb *txn.Table) string {
	t.Helper()
	var cols []string
	for i, typ := range tb.Types {
		name := fmt.Sprintf("c%d", i+1)
		if tb.Names != nil {
			name = tb.Names[i]
		}
		m := tb.Meta[i]
		var def string
		switch typ {
		case 1:
			def = "TINYINT"
		case 2:
			def = "SMALLINT"
		case 9:
			def = "MEDIUMINT"
		case 3:
			def = "INT"
		case 8:
			def = "BIGINT"
		case 4:
			def = "FLOAT"
		case 5:
			def = "DOUBLE"
		case 246:
			def = fmt.Sprintf("DECIMAL(%d,%d)", m>>8, m&0xff)
		case 15:
			def = fmt.Sprintf("VARBINARY(%d)", m)
		case 254:
			def = fmt.Sprintf("BINARY(%d)", int((m>>4)&0x300^0x300)+int(m&0xff))
		case 252:
			def = [...]string{"", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"}[m]
		case 10:
			def = "DATE"
		case 13:
			def = "YEAR"
		case 17:
			def = fmt.Sprintf("TIMESTAMP(%d)", m)
		case 18:
			def = fmt.Sprintf("DATETIME(%d)", m)
		case 19:
			def = fmt.Sprintf("TIME(%d)", m)
		case 16:
			def = fmt.Sprintf("BIT(%d)", int(m>>8)*8+int(m&0xff))
		default:
			t.Fatalf("%s column %d: type %d has no DDL here", tb.QualifiedName(), i+1, typ)
		}
		if tb.Unsigned != nil && tb.Unsigned[i] {
			def += " UNSIGNED"
		}
		if tb.Nullable[i] {
			def += " NULL"
		} else {
			def += " NOT NULL"
		}
		cols = append(cols, "`"+name+"` "+def)
	}
	key := []int{0}
	if tb.PrimaryKey != nil {
		key = tb.PrimaryKey
	}
	var kn []string
	for _, k := range key {
		kn = append(kn, strings.Fields(cols[k])[0])
	}
	return fmt.Sprintf("CREATE TABLE `%s`.`%s` (%s, PRIMARY KEY (%s))", tb.Schema, tb.Name, strings.Join(cols, ", "), strings.Join(kn, ", "))
}

// TestReplayMySQLFixtures replays each binlog a real MySQL server wrote
// into a MariaDB target, in every mode with compaction on and off, and
// compares it table by table with `mariadb-binlog FILE | mariadb` into
// another target.
func TestReplayMySQLFixtures(t *testing.T) {
	t.Parallel() // waits on servers, a replica and delays: overlaps with the other parallel tests
	ref, tgt := targetServer(t), targetServer(t)
	refDB, tgtDB := sandbox.MustOpen(t, ref, ""), sandbox.MustOpen(t, tgt, "")
	for _, fx := range []struct {
		name string
		// rows is how many rows the reference holds after the replay: a
		// replay that applies nothing cannot pass for equal.
		minRows int
		// noRef says why mariadb-binlog cannot be the reference; the
		// reference is then the same rows decoded by mariadb-binlog from
		// the payload (see compressedReference).
		noRef string
		// wantErr: prepl must exit 1 with this message, having applied
		// every complete transaction before it.
		wantErr string
	}{
		{name: "mysql-bin.checksum-none", minRows: 4},
		{name: "mysql-bin.checksum-crc32", minRows: 10},
		{name: "mysql-bin.compressed", minRows: 1, noRef: "mariadb-binlog 10.11 refuses MySQL 8's TRANSACTION_PAYLOAD_EVENT"},
		// Its one transaction has no commit: mariadb-binlog ends it with
		// ROLLBACK; prepl leaves it out and exits 1, as for any last file
		// that may still be written.
		{name: "mysql-bin.aurora-padding", wantErr: "mysql-bin.aurora-padding at offset 216: incomplete transaction"},
	} {
		t.Run(fx.name, func(t *testing.T) {
			file := fixtureDir + fx.name
			ddl, seed := missingTables(t, file)
			dropUserSchemas(t, refDB)
			sandbox.MustExec(t, refDB, ddl...)
			seedRows(t, refDB, seed)
			if fx.noRef == "" {
				if _, err := mariadbBinlogInto(t, ref, nil, file); err != nil {
					t.Fatal(err)
				}
			} else {
				// MySQL 8's utf8mb4_0900_ai_ci (255) is unknown to MariaDB
				// 10.11: the reference script says utf8mb4_general_ci (45).
				t.Logf("reference: %s; using the uncompressed copy of its events", fx.noRef)
				edit := func(s string) string { return strings.ReplaceAll(s, "collation_server=255", "collation_server=45") }
				if _, err := mariadbBinlogEdited(t, ref, edit, nil, uncompressedCopy(t, file)); err != nil {
					t.Fatal(err)
				}
			}
			if n := countAllRows(t, refDB); n < fx.minRows {
				t.Fatalf("reference holds %d rows, want at least %d", n, fx.minRows)
			}
			for _, mode := range depend.Modes {
				for _, compact := range []bool{true, false} {
					dropUserSchemas(t, tgtDB)
					sandbox.MustExec(t, tgtDB, ddl...)
					seedRows(t, tgtDB, seed)
					code, out := prepl(t, "replay", "--target", tgt.URL(), "--mode", string(mode),
						fmt.Sprintf("--compact=%v", compact), "--progress", "0", file)
					switch {
					case fx.wantErr == "" && code != 0:
						t.Fatalf("mode %s compact %v: exit %d\n%s", mode, compact, code, out)
					case fx.wantErr != "" && (code != 1 || !strings.Contains(out, fx.wantErr)):
						t.Fatalf("mode %s compact %v: exit %d, want 1 and %q\n%s", mode, compact, code, fx.wantErr, out)
					}
					if err := verify.Rows(context.Background(), refDB, tgtDB); err != nil {
						t.Fatalf("mode %s compact %v: differs from mariadb-binlog | mariadb: %v\n%s", mode, compact, err, out)
					}
				}
			}
		})
	}
}

func countAllRows(t *testing.T, db *sql.DB) int {
	t.Helper()
	tables, err := verify.Tables(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, tb := range tables {
		parts := strings.SplitN(tb, ".", 2)
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM `" + parts[0] + "`.`" + parts[1] + "`").Scan(&n); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// uncompressedCopy writes a copy of a MySQL binlog in which each
// compressed transaction payload is replaced by the events it holds (with
// their positions and checksums fixed): what the server writes with
// binlog_transaction_compression=OFF, which mariadb-binlog can read.
func uncompressedCopy(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), data[:4]...)
	checksum := false
	emit := func(ev []byte) { // ev without checksum
		ev = append([]byte(nil), ev...)
		size := len(ev)
		if checksum {
			size += 4
		}
		binary.LittleEndian.PutUint32(ev[9:], uint32(size))
		binary.LittleEndian.PutUint32(ev[13:], uint32(len(out)+size))
		out = append(out, ev...)
		if checksum {
			out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(ev))
		}
	}
	for pos := 4; pos+19 <= len(data); {
		size := int(binary.LittleEndian.Uint32(data[pos+9:]))
		ev := data[pos : pos+size]
		pos += size
		switch ev[4] {
		case 15: // format description: its checksum algorithm is the byte before the CRC
			checksum = ev[len(ev)-5] == 1
			emit(ev[:len(ev)-4])
		case 40: // transaction payload
			body := ev[19:]
			if checksum {
				body = body[:len(body)-4]
			}
			p := 0
			for body[p] != 0 { // fields: type, length, value; 0 ends them
				p += 2 + int(body[p+1])
			}
			d, err := zstd.NewReader(nil)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := d.DecodeAll(body[p+1:], nil)
			d.Close()
			if err != nil {
				t.Fatal(err)
			}
			for q := 0; q+19 <= len(inner); {
				n := int(binary.LittleEndian.Uint32(inner[q+9:]))
				emit(inner[q : q+n])
				q += n
			}
		default:
			if checksum {
				ev = ev[:len(ev)-4]
			}
			emit(ev)
		}
	}
	path := filepath.Join(t.TempDir(), filepath.Base(file)+".uncompressed")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// selectionSource writes a MariaDB binlog for the selection tests: 24
// transactions a minute apart (SET timestamp, from 2033-05-18 03:33:20
// UTC), in schemas a and b, in GTID domains 0 and 1, over three files.
func selectionSource(t *testing.T) (*sandbox.Server, []string) {
	t.Helper()
	src := source(t, nil)
	db := sandbox.MustOpen(t, src, "")
	db.SetMaxOpenConns(1)
	sandbox.MustExec(t, db, "SET timestamp = 2000000000", "CREATE DATABASE a", "CREATE DATABASE b",
		"CREATE TABLE a.t (id INT PRIMARY KEY, v INT)", "CREATE TABLE b.t (id INT PRIMARY KEY, v INT)")
	for i := 1; i <= 24; i++ {
		schema, domain := "a", 0
		if i%3 == 0 {
			schema = "b"
		}
		if i%4 == 0 {
			domain = 1
		}
		sandbox.MustExec(t, db, fmt.Sprintf("SET timestamp = %d", 2000000000+60*i), fmt.Sprintf("SET gtid_domain_id = %d", domain))
		if i%5 == 0 {
			sandbox.MustExec(t, db, fmt.Sprintf("UPDATE %s.t SET v = v + 1", schema))
		} else {
			sandbox.MustExec(t, db, fmt.Sprintf("INSERT INTO %s.t VALUES (%d, %d)", schema, i, i))
		}
		if i == 8 || i == 16 {
			sandbox.MustExec(t, db, "FLUSH BINARY LOGS")
		}
	}
	return src, binlogFiles(t, src)
}

var gtidLine = regexp.MustCompile(`(?m)\tGTID (\d+-\d+-\d+)`)

// mariadbBinlogGTIDs lists the GTIDs mariadb-binlog prints with args.
func mariadbBinlogGTIDs(t *testing.T, env []string, args []string, files []string) []string {
	t.Helper()
	cmd := exec.Command("mariadb-binlog", append(append([]string{"--no-defaults"}, args...), files...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mariadb-binlog %v: %v", args, err)
	}
	var gtids []string
	for _, m := range gtidLine.FindAllStringSubmatch(string(out), -1) {
		gtids = append(gtids, m[1])
	}
	return gtids
}

// dryRunGTIDs lists the GTIDs prepl replay --dry-run would apply.
func dryRunGTIDs(t *testing.T, args []string, files []string) []string {
	t.Helper()
	out := mustPrepl(t, append(append([]string{"replay", "--dry-run"}, args...), files...)...)
	var gtids []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "apply" {
			gtids = append(gtids, f[1])
		}
	}
	return gtids
}

// gtidOffsets maps each GTID to the "# at N" of its GTID event and its
// file, from mariadb-binlog's own output.
func gtidOffsets(t *testing.T, files []string) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	at := regexp.MustCompile(`(?m)^# at (\d+)\n#.*\tGTID (\d+-\d+-\d+)`)
	for _, f := range files {
		b, err := exec.Command("mariadb-binlog", "--no-defaults", f).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range at.FindAllStringSubmatch(string(b), -1) {
			out[m[2]] = [2]string{filepath.Base(f), m[1]}
		}
	}
	return out
}

// TestReplaySelectionMatchesMariadbBinlog: every selection option picks
// the transactions mariadb-binlog picks with the same option (or its
// equivalent where it has another name), and replaying with it ends in
// the state `mariadb-binlog OPTIONS | mariadb` leaves.
func TestReplaySelectionMatchesMariadbBinlog(t *testing.T) {
	src, files := selectionSource(t)
	_ = src
	if len(files) < 3 { // three, and the empty one binlogFiles's flush opened
		t.Fatalf("want 3 binlog files, got %v", files)
	}
	at := gtidOffsets(t, files)
	// Transaction i (1..24) has timestamp 2000000000+60*i: 03:33:20 UTC
	// plus i minutes on 2033-05-18; in Asia/Kolkata (+05:30) 09:03:20.
	ts := func(i int, layout string, loc *time.Location) string {
		return time.Unix(int64(2000000000+60*i), 0).In(loc).Format(layout)
	}
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	const plain = "2006-01-02 15:04:05"
	// The GTID of the 6th and 20th workload transaction, for positions.
	all := mariadbBinlogGTIDs(t, nil, nil, files)
	if len(all) != 28 { // 4 DDL + 24
		t.Fatalf("mariadb-binlog lists %d GTIDs, want 28: %v", len(all), all)
	}
	g6, g20 := all[4+5], all[4+19]
	for _, c := range []struct {
		name      string
		env       []string // for mariadb-binlog
		reference []string // mariadb-binlog's options
		prepl     []string // prepl's; nil: the same as reference
		files     []string // nil: all three
	}{
		{name: "start-datetime", reference: []string{"--start-datetime=" + ts(7, plain, time.Local)}},
		{name: "stop-datetime", reference: []string{"--stop-datetime=" + ts(17, plain, time.Local)}},
		{name: "between datetimes", reference: []string{"--start-datetime=" + ts(3, plain, time.Local), "--stop-datetime=" + ts(9, plain, time.Local)}},
		{name: "datetime in --timezone", env: []string{"TZ=Asia/Kolkata"},
			reference: []string{"--start-datetime=" + ts(5, plain, kolkata), "--stop-datetime=" + ts(21, plain, kolkata)},
			prepl:     []string{"--timezone", "Asia/Kolkata", "--start-datetime", ts(5, plain, kolkata), "--stop-datetime", ts(21, plain, kolkata)}},
		{name: "datetime with its zone", env: []string{"TZ=Asia/Kolkata"},
			reference: []string{"--stop-datetime=" + ts(12, plain, kolkata)},
			prepl:     []string{"--stop-datetime", ts(12, "2006-01-02 15:04:05-07:00", kolkata)}},
		{name: "start-position", reference: []string{"--start-position=" + at[g6][1]}},
		// --stop-position applies to the last file given.
		{name: "stop-position", reference: []string{"--stop-position=" + at[g20][1]}, files: files[:3]},
		{name: "both positions, one file", reference: []string{"--start-position=" + at[all[7]][1], "--stop-position=" + at[all[11]][1]}, files: files[:1]},
		// mariadb-binlog leaves out the domains its GTID positions do not
		// name; prepl's --stop-gtid stops the whole replay after it.
		{name: "start/stop GTID", reference: []string{"--start-position=0-1-9,1-1-1", "--stop-position=0-1-15,1-1-3"},
			prepl: []string{"--start-gtid", "0-1-9,1-1-1", "--stop-gtid", "0-1-15"}},
		{name: "include-gtids as a domain", reference: []string{"--do-domain-ids=1"}, prepl: []string{"--include-gtids", "1-1-1-100"}},
		{name: "exclude-gtids as a domain", reference: []string{"--ignore-domain-ids=1"}, prepl: []string{"--exclude-gtids", "1-1-1-100"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := c.files
			if fs == nil {
				fs = files
			}
			args := c.prepl
			if args == nil {
				for _, a := range c.reference {
					k, v, _ := strings.Cut(a, "=")
					args = append(args, k, v)
				}
			}
			want := mariadbBinlogGTIDs(t, c.env, c.reference, fs)
			got := dryRunGTIDs(t, args, fs)
			if len(want) == 0 || len(want) == len(all) {
				t.Fatalf("mariadb-binlog %v selects %d of %d: not a selection", c.reference, len(want), len(all))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("prepl %v selects\n  %v\nmariadb-binlog %v selects\n  %v", args, got, c.reference, want)
			}
		})
	}
}

// TestReplaySelectionAppliesAsMariadbBinlog: replaying with a selection
// (--database among them, which mariadb-binlog applies inside each
// transaction) ends in the state `mariadb-binlog OPTIONS | mariadb`
// leaves. The tables exist on both targets; every case starts after the
// DDL (--start-datetime), as a restore of a backup would.
func TestReplaySelectionAppliesAsMariadbBinlog(t *testing.T) {
	_, files := selectionSource(t)
	ref, tgt := targetServer(t), targetServer(t)
	refDB, tgtDB := sandbox.MustOpen(t, ref, ""), sandbox.MustOpen(t, tgt, "")
	after := "--start-datetime=" + time.Unix(2000000030, 0).Format("2006-01-02 15:04:05")
	stop := "--stop-datetime=" + time.Unix(2000000000+60*14, 0).Format("2006-01-02 15:04:05")
	for _, c := range [][]string{
		{after, "--database=a"},
		{after, "--database=b", stop},
		{after, stop},
	} {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			for _, db := range []*sql.DB{refDB, tgtDB} {
				dropUserSchemas(t, db)
				sandbox.MustExec(t, db, "CREATE DATABASE a", "CREATE DATABASE b",
					"CREATE TABLE a.t (id INT PRIMARY KEY, v INT)", "CREATE TABLE b.t (id INT PRIMARY KEY, v INT)")
			}
			if _, err := mariadbBinlogInto(t, ref, c, files...); err != nil {
				t.Fatal(err)
			}
			if n := countAllRows(t, refDB); n == 0 || n >= 19 {
				t.Fatalf("the reference holds %d rows: not a selection", n)
			}
			var args []string
			for _, a := range c {
				k, v, _ := strings.Cut(a, "=")
				args = append(args, k, v)
			}
			mustPrepl(t, append(append([]string{"replay", "--target", tgt.URL(), "--progress", "0"}, args...), files...)...)
			if err := verify.Rows(context.Background(), refDB, tgtDB); err != nil {
				t.Fatalf("differs from mariadb-binlog %v | mariadb: %v", c, err)
			}
		})
	}
}

// mariadbScript runs an SQL script on s with the mariadb client.
func mariadbScript(t *testing.T, s *sandbox.Server, script string) {
	t.Helper()
	cl := exec.Command("mariadb", "--no-defaults", "-uroot", "-S", s.Socket)
	cl.Stdin = strings.NewReader(script)
	if out, err := cl.CombinedOutput(); err != nil {
		t.Fatalf("mariadb: %v: %s", err, out)
	}
}

// TestReplayKeepGTIDRefusedForMySQLOnMariaDB: --keep-gtid cannot keep a
// MySQL GTID on a MariaDB server; it is refused before anything is applied.
func TestReplayKeepGTIDRefusedForMySQLOnMariaDB(t *testing.T) {
	tgt := targetServer(t)
	code, out := prepl(t, "replay", "--keep-gtid", "--target", tgt.URL(), "--progress", "0", fixtureDir+"mysql-bin.checksum-none")
	if code != 2 || !strings.Contains(out, "mysql-bin.checksum-none is a MySQL binlog and the target is MariaDB") {
		t.Fatalf("exit %d, want 2 and the reason:\n%s", code, out)
	}
	if n := countAllRows(t, sandbox.MustOpen(t, tgt, "")); n != 0 {
		t.Fatalf("%d rows applied", n)
	}
}

// TestReplaySkipPosition: --skip-position leaves out exactly one
// transaction of a binlog without GTIDs: the target equals mariadb-binlog
// applying the file up to it and from its end.
func TestReplaySkipPosition(t *testing.T) {
	file := fixtureDir + "mysql-bin.checksum-none"
	ddl, seed := missingTables(t, file)
	ref, tgt := targetServer(t), targetServer(t)
	refDB, tgtDB := sandbox.MustOpen(t, ref, ""), sandbox.MustOpen(t, tgt, "")
	for _, db := range []*sql.DB{refDB, tgtDB} {
		sandbox.MustExec(t, db, ddl...)
		seedRows(t, db, seed)
	}
	// The transaction at 2843 ends where the next begins, at 4142 (the
	// "# at" lines of mariadb-binlog -v).
	for _, part := range [][]string{{"--stop-position=2843"}, {"--start-position=4142"}} {
		if _, err := mariadbBinlogInto(t, ref, part, file); err != nil {
			t.Fatal(err)
		}
	}
	out := mustPrepl(t, "replay", "--dry-run", "--skip-position", "mysql-bin.checksum-none:2843", file)
	if !strings.Contains(out, "skip   (no GTID) at mysql-bin.checksum-none:2843") || !strings.Contains(out, "skip 1\n") {
		t.Fatalf("the dry run does not show the skip:\n%s", out)
	}
	mustPrepl(t, "replay", "--target", tgt.URL(), "--progress", "0", "--skip-position", "mysql-bin.checksum-none:2843", file)
	if err := verify.Rows(context.Background(), refDB, tgtDB); err != nil {
		t.Fatal(err)
	}
	// The stored position is past the whole file: the same command again
	// applies nothing more.
	out = mustPrepl(t, "replay", "--target", tgt.URL(), "--progress", "0", file)
	if !strings.Contains(out, "applied 0 transactions") {
		t.Fatalf("a second run applied something:\n%s", out)
	}
}

// TestReplayStartPositionInsideTransaction: a --start-position inside a
// transaction (after its first event: here the "# at 500" of a rows
// event of the transaction from 154 to 517 of a real MySQL 5.7 binlog)
// is refused with exit 2, naming the two offsets that would do, and
// nothing is applied; mariadb-binlog would apply the rest of that
// transaction without its start, and prepl used to skip it whole. The
// transaction's own start and end are taken as before.
func TestReplayStartPositionInsideTransaction(t *testing.T) {
	file := fixtureDir + "mysql-bin.checksum-crc32"
	want := "--start-position 500 is inside the transaction, which runs from mysql-bin.checksum-crc32:154 to 517: " +
		"give --start-position 154 to apply it, or 517 to start after it"
	if code, out := prepl(t, "replay", "--dry-run", "--start-position", "500", file); code != 2 || !strings.Contains(out, want) {
		t.Errorf("dry run: exit %d, want 2 saying %q:\n%s", code, want, out)
	}
	tgt := targetServer(t)
	code, out := prepl(t, "replay", "--target", tgt.URL(), "--progress", "0", "--start-position", "500", file)
	if code != 2 || !strings.Contains(out, want) || !strings.Contains(out, "applied 0 transactions") {
		t.Errorf("replay: exit %d, want 2 saying %q, nothing applied:\n%s", code, want, out)
	}
	for _, off := range []string{"154", "517"} {
		out := mustPrepl(t, "replay", "--dry-run", "--start-position", off, file)
		if !strings.Contains(out, "apply  (no GTID) at mysql-bin.checksum-crc32:"+off+" ") {
			t.Errorf("--start-position %s: the dry run does not apply the transaction at %s:\n%s", off, off, out)
		}
	}
}

// TestReplayWarnsWhenStopNotReached: a stop bound the files end before
// (a stop in a file not given, or a mistyped one) selects everything in
// them; the dry run and the replay say so, naming the bound, and say
// nothing when the stop is reached.
func TestReplayWarnsWhenStopNotReached(t *testing.T) {
	file := fixtureDir + "mysql-bin.checksum-none"
	warning := "warning: the files ended before --stop-position 99999999 was reached: every transaction in them was selected"
	if out := mustPrepl(t, "replay", "--dry-run", "--stop-position", "99999999", file); !strings.Contains(out, warning) {
		t.Errorf("dry run: no warning %q:\n%s", warning, out)
	}
	if out := mustPrepl(t, "replay", "--dry-run", "--stop-position", "2843", file); strings.Contains(out, "warning:") {
		t.Errorf("dry run with a stop reached warns:\n%s", out)
	}
	ddl, seed := missingTables(t, file)
	tgt := targetServer(t)
	db := sandbox.MustOpen(t, tgt, "")
	sandbox.MustExec(t, db, ddl...)
	seedRows(t, db, seed)
	if out := mustPrepl(t, "replay", "--target", tgt.URL(), "--progress", "0", "--stop-position", "99999999", file); !strings.Contains(out, warning) {
		t.Errorf("replay: no warning %q:\n%s", warning, out)
	}
	// Everything is applied now: a second run asks about nothing, and has
	// nothing to warn about.
	if out := mustPrepl(t, "replay", "--target", tgt.URL(), "--progress", "0", "--stop-position", "99999999", file); strings.Contains(out, "warning:") {
		t.Errorf("a second run, with nothing left to apply, warns:\n%s", out)
	}
}

// TestReplayWarnsOfUnmatchedInclude: an --include pattern that no table
// of the selected transactions matched (a typo: the schema's case) is
// named in a warning at the end; the patterns that matched are not.
func TestReplayWarnsOfUnmatchedInclude(t *testing.T) {
	file := fixtureDir + "mysql-bin.checksum-crc32"
	out := mustPrepl(t, "replay", "--dry-run", "--include", "Simu_file_dev.*", "--include", "auth.*", file)
	if !strings.Contains(out, "warning: --include Simu_file_dev.* matched no table in the transactions selected") ||
		strings.Contains(out, "--include auth.*") {
		t.Errorf("no warning naming --include Simu_file_dev.* alone:\n%s", out)
	}
	if out := mustPrepl(t, "replay", "--dry-run", "--include", "simu_file_dev.*", file); strings.Contains(out, "warning:") {
		t.Errorf("a matching --include warns:\n%s", out)
	}
}

// TestReplayPrintSQL: the script --dry-run --print-sql writes, run by the
// mariadb client, makes what the replay makes: with table definitions
// from a target (a MySQL 5.7 binlog has no column names), and from a
// MariaDB binlog's full row metadata without any target.
func TestReplayPrintSQL(t *testing.T) {
	t.Run("definitions from the target", func(t *testing.T) {
		file := fixtureDir + "mysql-bin.checksum-none"
		ddl, seed := missingTables(t, file)
		ref, tgt := targetServer(t), targetServer(t)
		refDB, tgtDB := sandbox.MustOpen(t, ref, ""), sandbox.MustOpen(t, tgt, "")
		sandbox.MustExec(t, refDB, ddl...)
		seedRows(t, refDB, seed)
		if _, err := mariadbBinlogInto(t, ref, nil, file); err != nil {
			t.Fatal(err)
		}
		script := mustPrepl(t, "replay", "--dry-run", "--print-sql", "--target", ref.URL(), file)
		sandbox.MustExec(t, tgtDB, ddl...)
		seedRows(t, tgtDB, seed)
		mariadbScript(t, tgt, script)
		if err := verify.Rows(context.Background(), refDB, tgtDB); err != nil {
			t.Fatalf("the printed SQL makes another state: %v\n%s", err, script)
		}
		code, out := prepl(t, "replay", "--dry-run", "--print-sql", file)
		if code == 0 || !strings.Contains(out, "no column names for account_db.account") || !strings.Contains(out, "--target") {
			t.Fatalf("without definitions: exit %d\n%s", code, out)
		}
	})
	t.Run("definitions from full row metadata", func(t *testing.T) {
		src := source(t, func(o *sandbox.Options) { o.BinlogRowMetadata = "FULL" })
		db := sandbox.MustOpen(t, src, "")
		sandbox.MustExec(t, db, typesWorkload...)
		sandbox.MustExec(t, db, allBytesWorkload()...)
		files := binlogFiles(t, src)
		script := mustPrepl(t, append([]string{"replay", "--dry-run", "--print-sql"}, files...)...)
		tgt := targetServer(t)
		mariadbScript(t, tgt, script)
		sameRows(t, src, tgt)
	})
	// With a target, the script runs in prepl's strict session, and the
	// one value only a lax session takes, an ENUM's empty error value,
	// goes in one.
	t.Run("strict, with an enum's error value", func(t *testing.T) {
		ddl := []string{"CREATE DATABASE en", "CREATE TABLE en.t (id INT PRIMARY KEY, e ENUM('a','b'), v VARCHAR(3))"}
		src := source(t, nil)
		db := sandbox.MustOpen(t, src, "")
		db.SetMaxOpenConns(1)
		sandbox.MustExec(t, db, ddl...)
		sandbox.MustExec(t, db, "FLUSH BINARY LOGS", "SET SESSION sql_mode=''",
			"INSERT INTO en.t VALUES (1, 'c', 'x'), (2, 'a', 'y')", "UPDATE en.t SET e = 'zz' WHERE id = 2")
		files := binlogFiles(t, src)
		tgt := targetServer(t)
		sandbox.MustExec(t, sandbox.MustOpen(t, tgt, ""), ddl...)
		script := mustPrepl(t, "replay", "--dry-run", "--print-sql", "--target", tgt.URL(), files[len(files)-2])
		if !strings.Contains(script, "\n"+mysql.SQLMode(true)+";\n") || !strings.HasPrefix(script, mysql.RowSession+";\n") {
			t.Fatalf("the script does not switch to the lax sql_mode for the enum's error value:\n%s", script)
		}
		mariadbScript(t, tgt, script)
		sameRows(t, src, tgt)
	})
}

// mysql57File writes a MySQL 5.7 binlog (no checksums, no GTIDs) of DDL
// statements: the format description of a real 5.7.20 binlog, then one
// Query event per statement, in database d.
func mysql57File(t *testing.T, stmts ...string) (string, []uint32) {
	t.Helper()
	fx, err := os.ReadFile(fixtureDir + "mysql-bin.checksum-none")
	if err != nil {
		t.Fatal(err)
	}
	fdeSize := binary.LittleEndian.Uint32(fx[4+9:])
	b := append([]byte(nil), fx[:4+fdeSize]...)
	var starts []uint32
	for _, q := range stmts {
		body := make([]byte, 13)
		body[8] = 1 // length of the database name
		body = append(append(body, "d\x00"...), q...)
		start := uint32(len(b))
		h := make([]byte, 19)
		binary.LittleEndian.PutUint32(h, 1600000000)
		h[4] = 2 // QUERY_EVENT
		binary.LittleEndian.PutUint32(h[5:], 1)
		binary.LittleEndian.PutUint32(h[9:], uint32(19+len(body)))
		binary.LittleEndian.PutUint32(h[13:], start+uint32(19+len(body)))
		b = append(append(b, h...), body...)
		starts = append(starts, start)
	}
	path := filepath.Join(t.TempDir(), "mysql-bin.000001")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, starts
}

// TestReplayMySQLOnlyDDLStops: a DDL MariaDB rejects (a MySQL 8
// multi-valued index) stops the replay before it, named by file:offset
// with the option that skips it; the same command with --skip-position
// goes on.
func TestReplayMySQLOnlyDDLStops(t *testing.T) {
	path, starts := mysql57File(t,
		"CREATE DATABASE d",
		"CREATE TABLE d.a (id INT PRIMARY KEY)",
		"CREATE TABLE d.t (id INT PRIMARY KEY, j JSON, INDEX mv ((CAST(j->'$.a' AS UNSIGNED ARRAY))))",
		"CREATE TABLE d.b (id INT PRIMARY KEY)")
	tgt := targetServer(t)
	db := sandbox.MustOpen(t, tgt, "")
	args := []string{"replay", "--target", tgt.URL(), "--progress", "0", path}
	code, out := prepl(t, args...)
	bad := fmt.Sprintf("mysql-bin.000001:%d", starts[2])
	if code == 0 || !strings.Contains(out, bad) || !strings.Contains(out, "--skip-position FILE:OFFSET") {
		t.Fatalf("exit %d, want an error naming %s and --skip-position:\n%s", code, bad, out)
	}
	tables, err := verify.Tables(context.Background(), db)
	if err != nil || strings.Join(tables, ",") != "d.a" {
		t.Fatalf("tables after the stop: %v %v, want d.a only", tables, err)
	}
	mustPrepl(t, append(args[:len(args)-1:len(args)-1], "--skip-position", bad, path)...)
	tables, err = verify.Tables(context.Background(), db)
	if err != nil || strings.Join(tables, ",") != "d.a,d.b" {
		t.Fatalf("tables after the skip: %v %v, want d.a,d.b", tables, err)
	}
}

var createdTableRe = regexp.MustCompile("^CREATE TABLE `([^`]+)`.`([^`]+)`")

// addTriggers creates on each table of ddl (missingTables's) a trigger
// for each of insert, update and delete that logs into trig.fired: rows
// from a row binlog must not fire them, so trig.fired stays empty.
func addTriggers(t *testing.T, db *sql.DB, ddl []string) {
	t.Helper()
	sandbox.MustExec(t, db, "CREATE DATABASE trig", "CREATE TABLE trig.fired (tbl VARCHAR(200), op VARCHAR(10))")
	n := 0
	for _, q := range ddl {
		m := createdTableRe.FindStringSubmatch(q)
		if m == nil {
			continue
		}
		for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
			n++
			sandbox.MustExec(t, db, fmt.Sprintf("CREATE TRIGGER `%s`.trg_%d BEFORE %s ON `%s`.`%s` FOR EACH ROW INSERT INTO trig.fired VALUES ('%s.%s', '%s')",
				m[1], n, op, m[1], m[2], m[1], m[2], op))
		}
	}
	if n == 0 {
		t.Fatal("no table to put a trigger on")
	}
}

// TestReplayMySQLFixturesWithTriggers replays the MySQL 5.7 fixtures into
// a MariaDB target whose tables (those the files do not create) have
// triggers: their rows go as BINLOG statements, MySQL's own events after
// MySQL's format description event, as mariadb-binlog | mariadb applies
// them (the reference, into a target with the same triggers). No trigger
// fires on either. MySQL 8.0's compressed transaction too: its events go
// with the checksums MySQL left out of the payload.
func TestReplayMySQLFixturesWithTriggers(t *testing.T) {
	t.Parallel() // waits on servers, a replica and delays: overlaps with the other parallel tests
	ref, tgt := targetServer(t), targetServer(t)
	refDB, tgtDB := sandbox.MustOpen(t, ref, ""), sandbox.MustOpen(t, tgt, "")
	for _, fx := range []struct {
		name       string
		minRows    int
		compressed bool
		v1         bool
	}{
		{name: "mysql-bin.checksum-none", minRows: 4},
		{name: "mysql-bin.checksum-crc32", minRows: 10},
		// MySQL 8.0.28: its events inside a compressed transaction
		// payload, which MySQL writes without checksums.
		{name: "mysql-bin.compressed", minRows: 1, compressed: true},
		// The 5.7.21 file as MySQL 5.5 writes rows events (version 1):
		// what 5.7 writes with log_bin_use_v1_row_events=ON.
		{name: "mysql-bin.checksum-crc32", minRows: 10, v1: true},
	} {
		name := fx.name
		if fx.v1 {
			name += "-v1"
		}
		t.Run(name, func(t *testing.T) {
			file := fixtureDir + fx.name
			if fx.v1 {
				file = v1RowsCopy(t, file)
			}
			ddl, seed := missingTables(t, file)
			dropUserSchemas(t, refDB)
			sandbox.MustExec(t, refDB, ddl...)
			seedRows(t, refDB, seed)
			addTriggers(t, refDB, ddl)
			if fx.compressed {
				// As in TestReplayMySQLFixtures: mariadb-binlog refuses the
				// payload; the reference reads its events uncompressed.
				edit := func(s string) string { return strings.ReplaceAll(s, "collation_server=255", "collation_server=45") }
				if _, err := mariadbBinlogEdited(t, ref, edit, nil, uncompressedCopy(t, file)); err != nil {
					t.Fatal(err)
				}
			} else if _, err := mariadbBinlogInto(t, ref, nil, file); err != nil {
				t.Fatal(err)
			}
			if n := countAllRows(t, refDB); n < fx.minRows {
				t.Fatalf("reference holds %d rows, want at least %d", n, fx.minRows)
			}
			var fired int
			if err := refDB.QueryRow("SELECT COUNT(*) FROM trig.fired").Scan(&fired); err != nil || fired != 0 {
				t.Fatalf("reference: %d triggers fired (%v)", fired, err)
			}
			for _, mode := range depend.Modes {
				for _, compact := range []bool{true, false} {
					dropUserSchemas(t, tgtDB)
					sandbox.MustExec(t, tgtDB, ddl...)
					seedRows(t, tgtDB, seed)
					addTriggers(t, tgtDB, ddl)
					code, out := prepl(t, "replay", "--target", tgt.URL(), "--mode", string(mode),
						fmt.Sprintf("--compact=%v", compact), "--progress", "0", file)
					if code != 0 {
						t.Fatalf("mode %s compact %v: exit %d\n%s", mode, compact, code, out)
					}
					if err := verify.Rows(context.Background(), refDB, tgtDB); err != nil {
						t.Fatalf("mode %s compact %v: differs from mariadb-binlog | mariadb: %v\n%s", mode, compact, err, out)
					}
				}
			}
		})
	}
}

// mysqlJSONFile writes a MySQL 8.0.28 binlog (the compressed fixture's
// format description event, CRC32) with one transaction inserting
// (1, '{"a":1}') into shop.doc (id INT, j JSON): binary JSON, which
// MariaDB's BINLOG statement cannot read.
func mysqlJSONFile(t *testing.T) string {
	t.Helper()
	fx, err := os.ReadFile(fixtureDir + "mysql-bin.compressed")
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), fx[:4]...)
	fdeLen := int(binary.LittleEndian.Uint32(fx[4+9:]))
	out = append(out, fx[4:4+fdeLen]...)
	event := func(typ byte, body []byte) {
		h := make([]byte, 19)
		binary.LittleEndian.PutUint32(h, 1700000000)
		h[4] = typ
		binary.LittleEndian.PutUint32(h[5:], 1)
		size := 19 + len(body) + 4
		binary.LittleEndian.PutUint32(h[9:], uint32(size))
		binary.LittleEndian.PutUint32(h[13:], uint32(len(out)+size))
		ev := append(h, body...)
		out = binary.LittleEndian.AppendUint32(append(out, ev...), crc32.ChecksumIEEE(ev))
	}
	begin := make([]byte, 13)
	begin[8] = 4
	begin = append(append(append(begin, "shop"...), 0), "BEGIN"...)
	event(2, begin)
	tm := []byte{100, 0, 0, 0, 0, 0, 1, 0, 4, 's', 'h', 'o', 'p', 0, 3, 'd', 'o', 'c', 0}
	tm = append(tm, 2, 3, 245, 1, 4, 0b10) // LONG, JSON (4 length bytes); j nullable
	event(19, tm)
	doc := []byte{0, 1, 0, 12, 0, 11, 0, 1, 0, 5, 1, 0, 'a'} // small object {"a": 1}
	row := binary.LittleEndian.AppendUint32([]byte{0}, 1)
	row = append(binary.LittleEndian.AppendUint32(row, uint32(len(doc))), doc...)
	event(30, append([]byte{100, 0, 0, 0, 0, 0, 1, 0, 2, 0, 2, 0b11}, row...))
	event(16, make([]byte, 8))
	path := filepath.Join(t.TempDir(), "mysql-bin.000001")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReplayMySQLJSONWithTriggersStops: a MySQL JSON column of a table
// with triggers on a MariaDB target cannot go as a BINLOG statement (the
// server answers Error 1105 Unknown error, to mariadb-binlog | mariadb
// too): prepl stops before applying it, naming the column and what to
// do. Without the triggers it applies.
func TestReplayMySQLJSONWithTriggersStops(t *testing.T) {
	file := mysqlJSONFile(t)
	tgt := targetServer(t)
	db := sandbox.MustOpen(t, tgt, "")
	ddl := []string{"CREATE DATABASE shop", "CREATE TABLE shop.doc (id INT PRIMARY KEY, j JSON)"}
	sandbox.MustExec(t, db, ddl...)
	addTriggers(t, db, []string{"CREATE TABLE `shop`.`doc`"})
	code, out := prepl(t, "replay", "--target", tgt.URL(), "--progress", "0", file)
	if code == 0 || !strings.Contains(out, "column 2 of shop.doc is MySQL's JSON") || !strings.Contains(out, "LONGTEXT column on the source") || !strings.Contains(out, "drop them on the target") {
		t.Fatalf("exit %d, want a stop naming the JSON column and what to do:\n%s", code, out)
	}
	if n := countAllRows(t, db); n != 0 {
		t.Fatalf("%d rows applied", n)
	}
	// The reference cannot apply it either.
	ref := targetServer(t)
	sandbox.MustExec(t, sandbox.MustOpen(t, ref, ""), ddl...)
	if _, err := mariadbBinlogInto(t, ref, nil, file); err == nil || !strings.Contains(err.Error(), "1105") {
		t.Fatalf("mariadb-binlog | mariadb: %v, want ERROR 1105", err)
	}
	sandbox.MustExec(t, db, "DROP DATABASE trig", "DROP TRIGGER shop.trg_1", "DROP TRIGGER shop.trg_2", "DROP TRIGGER shop.trg_3")
	mustPrepl(t, "replay", "--target", tgt.URL(), "--progress", "0", file)
	var a string
	if err := db.QueryRow("SELECT JSON_VALUE(j, '$.a') FROM shop.doc WHERE id = 1").Scan(&a); err != nil || a != "1" {
		t.Fatalf("without triggers: j's a = %q (%v), want 1", a, err)
	}
}

// v1RowsCopy writes a copy of a MySQL 5.6+ binlog whose rows events of
// version 2 (types 30-32) are written as version 1 (23-25, without the
// extra data length), as MySQL 5.5, or 5.6+ with
// log_bin_use_v1_row_events=ON, writes them; positions and checksums are
// fixed.
func v1RowsCopy(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), data[:4]...)
	checksum, n := false, 0
	for pos := 4; pos+19 <= len(data); {
		size := int(binary.LittleEndian.Uint32(data[pos+9:]))
		ev := append([]byte(nil), data[pos:pos+size]...)
		pos += size
		if ev[4] == 15 {
			checksum = ev[len(ev)-5] == 1
		}
		if checksum {
			ev = ev[:len(ev)-4]
		}
		if ev[4] >= 30 && ev[4] <= 32 {
			if extra := binary.LittleEndian.Uint16(ev[19+8:]); extra != 2 {
				t.Fatalf("rows event with %d bytes of extra data", extra-2)
			}
			ev = append(ev[:19+8], ev[19+10:]...)
			ev[4] -= 7
			n++
		}
		size = len(ev)
		if checksum {
			size += 4
		}
		binary.LittleEndian.PutUint32(ev[9:], uint32(size))
		binary.LittleEndian.PutUint32(ev[13:], uint32(len(out)+size))
		out = append(out, ev...)
		if checksum {
			out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(ev))
		}
	}
	if n == 0 {
		t.Fatal("no rows event of version 2")
	}
	path := filepath.Join(t.TempDir(), filepath.Base(file)+".v1")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
