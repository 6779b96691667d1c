package snapshot

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
)

// MySQLTarget copies into MySQL/MariaDB: the source's own CREATE TABLE
// (its secondary keys added after the rows: mykeys.go), rows by LOAD DATA
// LOCAL INFILE streamed from memory (myload.go) or, where the server
// refuses local_infile or a column is spatial, as INSERT literals that
// keep every byte (strings in hex with their charset).
type MySQLTarget struct {
	DB *sql.DB
	t  *mysql.Target

	channel      string
	loadData     bool               // the server allows LOAD DATA LOCAL INFILE
	keysAtCreate bool               // create every table with all its keys (tests compare both ways)
	referenced   map[[2]string]bool // tables a foreign key references: NoteForeignKeys
	idle         chan *sql.Conn     // connections with the copy's session settings
}

// maxIdle is how many writing connections stay open between chunks:
// more than any --workers in use.
const maxIdle = 64

// OpenMySQL connects and creates the position table (target/mysql's).
func OpenMySQL(ctx context.Context, url string) (*MySQLTarget, error) {
	e, err := mysql.ParseURL(url)
	if err != nil {
		return nil, err
	}
	if e, err = e.WithDefaults(); err != nil {
		return nil, err
	}
	t, err := mysql.Open(ctx, e, "")
	if err != nil {
		return nil, err
	}
	m := &MySQLTarget{DB: t.DB, t: t, idle: make(chan *sql.Conn, maxIdle)}
	var local sql.NullInt64
	m.loadData = t.DB.QueryRowContext(ctx, "SELECT @@GLOBAL.local_infile").Scan(&local) == nil && local.Int64 == 1
	return m, nil
}

func (m *MySQLTarget) Close() error {
	for {
		select {
		case c := <-m.idle:
			c.Close()
		default:
			return m.t.Close()
		}
	}
}

// conn returns a connection with the copy's session settings: one
// already set up, or a new one.
func (m *MySQLTarget) conn(ctx context.Context) (*sql.Conn, error) {
	select {
	case c := <-m.idle:
		return c, nil
	default:
	}
	c, err := m.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for _, q := range []string{"SET SESSION foreign_key_checks = 0", "SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'",
		"SET SESSION time_zone = '+00:00'", "SET NAMES utf8mb4", "SET SESSION autocommit = 0"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// release keeps c for the next chunk; ok false (an error, so a
// transaction may be open) closes it.
func (m *MySQLTarget) release(c *sql.Conn, ok bool) {
	if ok {
		select {
		case m.idle <- c:
			return
		default:
		}
	}
	c.Close()
}

func (m *MySQLTarget) Prepare(ctx context.Context, channel string) error {
	m.channel = channel
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS prepl.copy_keys (channel VARCHAR(64) NOT NULL, schema_name VARCHAR(64) NOT NULL,
			table_name VARCHAR(64) NOT NULL, key_defs MEDIUMTEXT NOT NULL,
			PRIMARY KEY (channel, schema_name, table_name)) ENGINE=InnoDB`,
		`CREATE TABLE IF NOT EXISTS prepl.copy_snapshot (channel VARCHAR(64) PRIMARY KEY, gtid_pos TEXT NOT NULL,
			file VARCHAR(512) NOT NULL, pos BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB`,
		`CREATE TABLE IF NOT EXISTS prepl.copy_progress (channel VARCHAR(64) NOT NULL, schema_name VARCHAR(64) NOT NULL,
			table_name VARCHAR(64) NOT NULL, part INT NOT NULL, last_key TEXT NOT NULL, hi_key TEXT NOT NULL,
			rows_copied BIGINT NOT NULL DEFAULT 0, done BOOL NOT NULL DEFAULT FALSE,
			PRIMARY KEY (channel, schema_name, table_name, part)) ENGINE=InnoDB`,
	} {
		if _, err := m.DB.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func (m *MySQLTarget) Snapshot(ctx context.Context, channel string) (Position, bool, error) {
	var p Position
	err := m.DB.QueryRowContext(ctx, "SELECT gtid_pos, file, pos FROM prepl.copy_snapshot WHERE channel = ?", channel).Scan(&p.GTIDPos, &p.File, &p.Pos)
	if err == sql.ErrNoRows {
		return p, false, nil
	}
	return p, err == nil, err
}

func (m *MySQLTarget) BeginSnapshot(ctx context.Context, channel string, p Position) error {
	_, err := m.DB.ExecContext(ctx, "INSERT INTO prepl.copy_snapshot VALUES (?, ?, ?, ?)", channel, p.GTIDPos, p.File, p.Pos)
	return err
}

func (m *MySQLTarget) CreateTable(ctx context.Context, channel string, d *postgres.TableDef, create string) error {
	c, err := m.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, q := range []string{"SET SESSION foreign_key_checks = 0", "CREATE DATABASE IF NOT EXISTS " + quoteMy(d.Schema), "USE " + quoteMy(d.Schema)} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	var exists int
	if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", d.Schema, d.Name).Scan(&exists); err != nil {
		return err
	}
	if exists > 0 {
		return nil // created by the interrupted copy (its keys recorded then), or there before the copy
	}
	if m.deferKeys(d) {
		if table, keys, ok := splitKeys(create); ok {
			// Recorded before the table is created: a copy killed in between adds them when it resumes.
			if _, err := c.ExecContext(ctx, "REPLACE INTO prepl.copy_keys VALUES (?, ?, ?, ?)", channel, d.Schema, d.Name, strings.Join(keys, "\n")); err != nil {
				return err
			}
			create = table
		}
	}
	// SHOW CREATE TABLE names the table without its database.
	_, err = c.ExecContext(ctx, strings.Replace(create, "CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1))
	return err
}

func (m *MySQLTarget) Progress(ctx context.Context, channel string, d *postgres.TableDef) ([]Part, error) {
	rows, err := m.DB.QueryContext(ctx, "SELECT part, last_key, hi_key, done FROM prepl.copy_progress WHERE channel = ? AND schema_name = ? AND table_name = ? ORDER BY part",
		channel, d.Schema, d.Name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanParts(rows)
}

func (m *MySQLTarget) PlanParts(ctx context.Context, channel string, d *postgres.TableDef, parts []Part) error {
	tx, err := m.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, p := range parts {
		if _, err := tx.ExecContext(ctx, "INSERT INTO prepl.copy_progress (channel, schema_name, table_name, part, last_key, hi_key) VALUES (?, ?, ?, ?, ?, ?)",
			channel, d.Schema, d.Name, p.N, encodeKey(p.Last), encodeKey(p.Hi)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (m *MySQLTarget) WriteChunk(ctx context.Context, channel string, d *postgres.TableDef, part int, rows [][][]byte, last []string, done bool) error {
	c, err := m.conn(ctx)
	if err != nil {
		return err
	}
	err = m.writeChunk(ctx, c, channel, d, part, rows, last, done)
	if err != nil {
		c.ExecContext(context.Background(), "ROLLBACK")
	}
	m.release(c, err == nil)
	return err
}

// writeChunk writes rows and their progress in one transaction on c, in
// two round trips (LOAD DATA; the progress and COMMIT) or one (the
// INSERT, the progress and COMMIT): the session has autocommit off, and
// the target's connections take several statements at once.
func (m *MySQLTarget) writeChunk(ctx context.Context, c *sql.Conn, channel string, d *postgres.TableDef, part int, rows [][][]byte, last []string, done bool) error {
	end := fmt.Sprintf("UPDATE prepl.copy_progress SET last_key = %s, rows_copied = rows_copied + %d, done = %v WHERE channel = %s AND schema_name = %s AND table_name = %s AND part = %d; COMMIT",
		mysql.QuoteString(encodeKey(last)), len(rows), done, mysql.QuoteString(channel), mysql.QuoteString(d.Schema), mysql.QuoteString(d.Name), part)
	if len(rows) > 0 && m.loadData && loadable(d) {
		if err := loadChunk(ctx, c, d, rows); err != nil {
			return err
		}
	} else if len(rows) > 0 {
		q, err := insertChunk(d, rows)
		if err != nil {
			return err
		}
		end = q + "; " + end
	}
	_, err := c.ExecContext(ctx, end)
	return err
}

// insertChunk is rows as one multi-row INSERT of literals.
func insertChunk(d *postgres.TableDef, rows [][][]byte) (string, error) {
	var cols []string
	for _, c := range d.Columns {
		if c.Generated == "" {
			cols = append(cols, quoteMy(c.Name))
		}
	}
	var b strings.Builder
	b.WriteString("INSERT INTO " + quoteMy(d.Schema) + "." + quoteMy(d.Name) + " (" + strings.Join(cols, ",") + ") VALUES ")
	for r, row := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		n := 0
		for i, v := range row {
			if d.Columns[i].Generated != "" {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			lit, err := myLiteral(v, &d.Columns[i])
			if err != nil {
				return "", fmt.Errorf("row %s: %w", keyOf(d, row), err)
			}
			b.WriteString(lit)
		}
		b.WriteByte(')')
	}
	return b.String(), nil
}

// myLiteral writes a source value (SourceExpr's text) back as a literal
// of the same column type.
func myLiteral(v []byte, c *postgres.Column) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	k, err := postgres.KindOf(c)
	if err != nil && !strings.Contains(c.Type, "geometry") {
		return "", err
	}
	switch k {
	case postgres.KindInt, postgres.KindDecimal, postgres.KindFloat, postgres.KindDouble, postgres.KindBit, postgres.KindYear:
		return string(v), nil
	case postgres.KindDate, postgres.KindDatetime, postgres.KindTimestamp, postgres.KindTime:
		return mysql.QuoteString(string(v)), nil
	case postgres.KindText:
		cs := c.Charset
		if cs == "" {
			cs = "utf8mb4"
		}
		return "_" + cs + " X'" + hex.EncodeToString(v) + "'", nil
	case postgres.KindEnum, postgres.KindSet, postgres.KindJSON:
		return "_utf8mb4 X'" + hex.EncodeToString(v) + "'", nil
	}
	return "X'" + hex.EncodeToString(v) + "'", nil
}

func (m *MySQLTarget) FinishCopy(ctx context.Context, tables []*postgres.TableDef) error { return nil }

func (m *MySQLTarget) StorePosition(ctx context.Context, channel string, p Position) error {
	c, err := m.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, q := range []string{"BEGIN",
		fmt.Sprintf(`INSERT INTO prepl.position (channel, slot, gtid_pos, file, pos, last_gtid, floor_gtid, floor_file, floor_pos)
			VALUES (%[1]s, 'main', %[2]s, %[3]s, %[4]d, '', %[2]s, %[3]s, %[4]d) ON DUPLICATE KEY UPDATE gtid_pos = VALUES(gtid_pos),
			file = VALUES(file), pos = VALUES(pos), floor_gtid = VALUES(floor_gtid), floor_file = VALUES(floor_file), floor_pos = VALUES(floor_pos)`,
			mysql.QuoteString(channel), mysql.QuoteString(p.GTIDPos), mysql.QuoteString(p.File), p.Pos),
		"DELETE FROM prepl.copy_snapshot WHERE channel = " + mysql.QuoteString(channel),
		"DELETE FROM prepl.copy_progress WHERE channel = " + mysql.QuoteString(channel),
		"DELETE FROM prepl.copy_keys WHERE channel = " + mysql.QuoteString(channel),
		"COMMIT"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			c.ExecContext(context.Background(), "ROLLBACK")
			return err
		}
	}
	return nil
}
