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

// MySQLTarget copies into MySQL/MariaDB: the source's own CREATE TABLE,
// rows as literals that keep every byte (strings in hex with their charset).
type MySQLTarget struct {
	DB *sql.DB
	t  *mysql.Target
}

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
	return &MySQLTarget{DB: t.DB, t: t}, nil
}

func (m *MySQLTarget) Close() error { return m.t.Close() }

func (m *MySQLTarget) Prepare(ctx context.Context, channel string) error {
	for _, q := range []string{
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
	// SHOW CREATE TABLE names the table without its database.
	create = strings.Replace(create, "CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1)
	for _, q := range []string{"SET SESSION foreign_key_checks = 0", "CREATE DATABASE IF NOT EXISTS " + quoteMy(d.Schema), "USE " + quoteMy(d.Schema), create} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
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
	var stmts []string
	if len(rows) > 0 {
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
					return fmt.Errorf("row %s: %w", keyOf(d, row), err)
				}
				b.WriteString(lit)
			}
			b.WriteByte(')')
		}
		stmts = append(stmts, b.String())
	}
	c, err := m.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, q := range []string{"SET SESSION foreign_key_checks = 0", "SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'",
		"SET SESSION time_zone = '+00:00'", "SET NAMES utf8mb4", "BEGIN"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	stmts = append(stmts, fmt.Sprintf("UPDATE prepl.copy_progress SET last_key = %s, rows_copied = rows_copied + %d, done = %v WHERE channel = %s AND schema_name = %s AND table_name = %s AND part = %d",
		mysql.QuoteString(encodeKey(last)), len(rows), done, mysql.QuoteString(channel), mysql.QuoteString(d.Schema), mysql.QuoteString(d.Name), part), "COMMIT")
	for _, q := range stmts {
		if _, err := c.ExecContext(ctx, q); err != nil {
			c.ExecContext(context.Background(), "ROLLBACK")
			return err
		}
	}
	return nil
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

func (m *MySQLTarget) FinishTable(ctx context.Context, d *postgres.TableDef) error { return nil }

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
		"COMMIT"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			c.ExecContext(context.Background(), "ROLLBACK")
			return err
		}
	}
	return nil
}
