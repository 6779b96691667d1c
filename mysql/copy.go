package mysql

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/prepl/prepl/snapshot"
	"github.com/prepl/prepl/tabledef"
)

// CopyTarget is prepl copy's writer into MySQL/MariaDB (a
// snapshot.Target): the source's own CREATE TABLE (its secondary keys
// added after the rows: copykeys.go), rows by LOAD DATA LOCAL INFILE
// streamed from memory (copyload.go) or, where the server refuses
// local_infile or a column is spatial, as INSERT literals that keep every
// byte (strings in hex with their charset).
type CopyTarget struct {
	DB *sql.DB
	t  *Target

	channel      string
	loadData     bool               // the server allows LOAD DATA LOCAL INFILE
	keysAtCreate bool               // create every table with all its keys (tests compare both ways)
	referenced   map[[2]string]bool // tables a foreign key references: NoteForeignKeys
	idle         chan *sql.Conn     // connections with the copy's session settings
}

var _ snapshot.Target = (*CopyTarget)(nil)

// maxIdle is how many writing connections stay open between chunks:
// more than any --workers in use.
const maxIdle = 64

// OpenCopy connects and creates the position table (target/mysql's).
func OpenCopy(ctx context.Context, url string) (*CopyTarget, error) {
	e, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if e, err = e.WithDefaults(); err != nil {
		return nil, err
	}
	t, err := Open(ctx, e, "")
	if err != nil {
		return nil, err
	}
	m := &CopyTarget{DB: t.DB, t: t, idle: make(chan *sql.Conn, maxIdle)}
	var local sql.NullInt64
	m.loadData = t.DB.QueryRowContext(ctx, "SELECT @@GLOBAL.local_infile").Scan(&local) == nil && local.Int64 == 1
	return m, nil
}

func (m *CopyTarget) Close() error {
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
func (m *CopyTarget) conn(ctx context.Context) (*sql.Conn, error) {
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
func (m *CopyTarget) release(c *sql.Conn, ok bool) {
	if ok {
		select {
		case m.idle <- c:
			return
		default:
		}
	}
	c.Close()
}

func (m *CopyTarget) Prepare(ctx context.Context, channel string) error {
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

func (m *CopyTarget) Snapshot(ctx context.Context, channel string) (snapshot.Position, bool, error) {
	var p snapshot.Position
	err := m.DB.QueryRowContext(ctx, "SELECT gtid_pos, file, pos FROM prepl.copy_snapshot WHERE channel = ?", channel).Scan(&p.GTIDPos, &p.File, &p.Pos)
	if err == sql.ErrNoRows {
		return p, false, nil
	}
	return p, err == nil, err
}

func (m *CopyTarget) BeginSnapshot(ctx context.Context, channel string, p snapshot.Position) error {
	_, err := m.DB.ExecContext(ctx, "INSERT INTO prepl.copy_snapshot VALUES (?, ?, ?, ?)", channel, p.GTIDPos, p.File, p.Pos)
	return err
}

func (m *CopyTarget) CreateTable(ctx context.Context, channel string, d *tabledef.Table, create string) error {
	c, err := m.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, q := range []string{"SET SESSION foreign_key_checks = 0", "CREATE DATABASE IF NOT EXISTS " + QuoteIdent(d.Schema), "USE " + QuoteIdent(d.Schema)} {
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

func (m *CopyTarget) Progress(ctx context.Context, channel string, d *tabledef.Table) ([]snapshot.Part, error) {
	rows, err := m.DB.QueryContext(ctx, "SELECT part, last_key, hi_key, done FROM prepl.copy_progress WHERE channel = ? AND schema_name = ? AND table_name = ? ORDER BY part",
		channel, d.Schema, d.Name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return snapshot.ScanParts(rows)
}

func (m *CopyTarget) PlanParts(ctx context.Context, channel string, d *tabledef.Table, parts []snapshot.Part) error {
	tx, err := m.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, p := range parts {
		if _, err := tx.ExecContext(ctx, "INSERT INTO prepl.copy_progress (channel, schema_name, table_name, part, last_key, hi_key) VALUES (?, ?, ?, ?, ?, ?)",
			channel, d.Schema, d.Name, p.N, snapshot.EncodeKey(p.Last), snapshot.EncodeKey(p.Hi)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (m *CopyTarget) WriteChunk(ctx context.Context, channel string, d *tabledef.Table, part int, rows [][][]byte, last []string, done bool) error {
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
func (m *CopyTarget) writeChunk(ctx context.Context, c *sql.Conn, channel string, d *tabledef.Table, part int, rows [][][]byte, last []string, done bool) error {
	end := fmt.Sprintf("UPDATE prepl.copy_progress SET last_key = %s, rows_copied = rows_copied + %d, done = %v WHERE channel = %s AND schema_name = %s AND table_name = %s AND part = %d; COMMIT",
		QuoteString(snapshot.EncodeKey(last)), len(rows), done, QuoteString(channel), QuoteString(d.Schema), QuoteString(d.Name), part)
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
func insertChunk(d *tabledef.Table, rows [][][]byte) (string, error) {
	var cols []string
	for _, c := range d.Columns {
		if c.Generated == "" {
			cols = append(cols, QuoteIdent(c.Name))
		}
	}
	var b strings.Builder
	b.WriteString("INSERT INTO " + QuoteIdent(d.Schema) + "." + QuoteIdent(d.Name) + " (" + strings.Join(cols, ",") + ") VALUES ")
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
				return "", fmt.Errorf("row %s: %w", snapshot.KeyOf(d, row), err)
			}
			b.WriteString(lit)
		}
		b.WriteByte(')')
	}
	return b.String(), nil
}

// myLiteral writes a source value (snapshot.SourceExpr's text) back as a
// literal of the same column type.
func myLiteral(v []byte, c *tabledef.Column) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	k, err := tabledef.KindOf(c)
	if err != nil && !strings.Contains(c.Type, "geometry") {
		// A type no kind covers (MariaDB's INET4, INET6, UUID): the source
		// read it as the text the type prints and reads back, so the same
		// MySQL/MariaDB type on the target takes that text as it is.
		return "_utf8mb4 X'" + hex.EncodeToString(v) + "'", nil
	}
	switch k {
	case tabledef.KindInt, tabledef.KindDecimal, tabledef.KindFloat, tabledef.KindDouble, tabledef.KindBit, tabledef.KindYear:
		return string(v), nil
	case tabledef.KindDate, tabledef.KindDatetime, tabledef.KindTimestamp, tabledef.KindTime:
		return QuoteString(string(v)), nil
	case tabledef.KindText:
		cs := c.Charset
		if cs == "" {
			cs = "utf8mb4"
		}
		return "_" + cs + " X'" + hex.EncodeToString(v) + "'", nil
	case tabledef.KindEnum, tabledef.KindSet, tabledef.KindJSON:
		return "_utf8mb4 X'" + hex.EncodeToString(v) + "'", nil
	}
	return "X'" + hex.EncodeToString(v) + "'", nil
}

func (m *CopyTarget) FinishCopy(ctx context.Context, tables []*tabledef.Table) error { return nil }

func (m *CopyTarget) StorePosition(ctx context.Context, channel string, p snapshot.Position) error {
	c, err := m.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, q := range []string{"BEGIN",
		fmt.Sprintf(`INSERT INTO prepl.position (channel, slot, gtid_pos, file, pos, last_gtid, floor_gtid, floor_file, floor_pos)
			VALUES (%[1]s, 'main', %[2]s, %[3]s, %[4]d, '', %[2]s, %[3]s, %[4]d) ON DUPLICATE KEY UPDATE gtid_pos = VALUES(gtid_pos),
			file = VALUES(file), pos = VALUES(pos), floor_gtid = VALUES(floor_gtid), floor_file = VALUES(floor_file), floor_pos = VALUES(floor_pos)`,
			QuoteString(channel), QuoteString(p.GTIDPos), QuoteString(p.File), p.Pos),
		"DELETE FROM prepl.copy_snapshot WHERE channel = " + QuoteString(channel),
		"DELETE FROM prepl.copy_progress WHERE channel = " + QuoteString(channel),
		"DELETE FROM prepl.copy_keys WHERE channel = " + QuoteString(channel),
		"COMMIT"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			c.ExecContext(context.Background(), "ROLLBACK")
			return err
		}
	}
	return nil
}

// VerifyReader reads a MySQL/MariaDB target for snapshot.Verify, as the
// source is read.
type VerifyReader struct {
	snapshot.Reader
	db *sql.DB
	c  *sql.Conn
}

// OpenVerifyReader connects to the target at url.
func OpenVerifyReader(ctx context.Context, url string) (*VerifyReader, error) {
	e, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	if e, err = e.WithDefaults(); err != nil {
		return nil, err
	}
	db, err := e.OpenDB()
	if err != nil {
		return nil, err
	}
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to target: %w", err)
	}
	r, err := snapshot.NewMySQLReader(ctx, c)
	if err != nil {
		c.Close()
		db.Close()
		return nil, err
	}
	return &VerifyReader{Reader: r, db: db, c: c}, nil
}

func (v *VerifyReader) Close() error {
	v.c.Close()
	return v.db.Close()
}
