package snapshot

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/prepl/prepl/tabledef"
)

// Source is the MySQL/MariaDB server a copy or a comparison reads
// (mysql.Endpoint is one).
type Source interface {
	OpenDB() (*sql.DB, error)
}

// ParseFunc reads a source table's SHOW CREATE TABLE (create) in database
// schema: postgres.ParseCreateTable, the one parser of MySQL's CREATE
// TABLE, which stays with the DDL translation whose lexer it shares.
type ParseFunc func(create, schema string) (*tabledef.Table, error)

// Target is where a copy writes: mysql.CopyTarget (MySQL/MariaDB) or
// postgres.CopyTarget (PostgreSQL), chosen by the caller. Every chunk
// commits with its progress row, so a copy killed at any point resumes
// from the last committed chunk.
type Target interface {
	// Prepare creates prepl's tables (position, copy_progress, copy_snapshot).
	Prepare(ctx context.Context, channel string) error
	// Snapshot returns the position an earlier, unfinished copy of this
	// channel began at (started false when none).
	Snapshot(ctx context.Context, channel string) (p Position, started bool, err error)
	// BeginSnapshot records the position a copy begins at.
	BeginSnapshot(ctx context.Context, channel string, p Position) error
	// NoteForeignKeys tells the target every table the copy creates,
	// before the first CreateTable (MySQL: a table a foreign key
	// references keeps its keys at creation). A target with no use for
	// them does nothing.
	NoteForeignKeys(tables []*tabledef.Table)
	// CreateTable creates the table unless it exists (a resumed copy).
	CreateTable(ctx context.Context, channel string, t *tabledef.Table, showCreate string) error
	// Progress returns the table's parts as planned (none before PlanParts).
	Progress(ctx context.Context, channel string, t *tabledef.Table) ([]Part, error)
	// PlanParts records the parts a table is copied in, before any row.
	PlanParts(ctx context.Context, channel string, t *tabledef.Table, parts []Part) error
	// WriteChunk writes rows (source text read through SourceExpr, nil
	// for NULL) and the progress of their part in one transaction.
	WriteChunk(ctx context.Context, channel string, t *tabledef.Table, part int, rows [][][]byte, last []string, done bool) error
	// FinishTable runs what waits for the table's rows (PostgreSQL: its
	// keys and indexes, identity sequences), as soon as they are all
	// copied. A resumed copy runs it again: it skips what is done.
	FinishTable(ctx context.Context, t *tabledef.Table) error
	// FinishCopy runs what waits for every table's keys (PostgreSQL:
	// foreign keys), after FinishTable of every table; again on resume.
	FinishCopy(ctx context.Context, tables []*tabledef.Table) error
	// StorePosition writes the snapshot's position as the channel's
	// position (slot "main") and ends the copy.
	StorePosition(ctx context.Context, channel string, p Position) error
	Close() error
}

// Part is a range of a table's primary key, copied chunk by chunk in key
// order by one worker while other workers copy the other parts: the rows
// with a key above Last (nil: from the first) up to Hi (nil: to the last).
type Part struct {
	N    int
	Last []string
	Hi   []string
	Done bool
}

// PartRows is what ScanParts reads: *sql.Rows (MySQL) or pgx.Rows
// (PostgreSQL) of `SELECT part, last_key, hi_key, done`.
type PartRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanParts reads a table's parts from prepl.copy_progress.
func ScanParts(rows PartRows) ([]Part, error) {
	var parts []Part
	for rows.Next() {
		var p Part
		var last, hi string
		if err := rows.Scan(&p.N, &last, &hi, &p.Done); err != nil {
			return nil, err
		}
		p.Last, p.Hi = DecodeKey(last), DecodeKey(hi)
		parts = append(parts, p)
	}
	return parts, rows.Err()
}

// EncodeKey writes a key for a progress row: JSON of base64 values, as
// a binary key's bytes are not UTF-8, which a JSON string would turn into
// U+FFFD (and a resumed copy would start from another key).
func EncodeKey(k []string) string {
	var bs [][]byte // nil stays nil: no key (yet)
	for _, v := range k {
		bs = append(bs, []byte(v))
	}
	b, _ := json.Marshal(bs)
	return string(b)
}

// DecodeKey reads a key EncodeKey wrote; nil for none.
func DecodeKey(s string) []string {
	if s == "" {
		return nil
	}
	var bs [][]byte
	if json.Unmarshal([]byte(s), &bs) != nil || bs == nil {
		return nil
	}
	k := make([]string, len(bs))
	for i, b := range bs {
		k[i] = string(b)
	}
	return k
}

// KeyOf names a row of d by its primary key, for errors.
func KeyOf(d *tabledef.Table, row [][]byte) string {
	k := d.PrimaryKey()
	if k == nil {
		return "(no key)"
	}
	var parts []string
	for _, name := range k.Columns {
		for i := range d.Columns {
			if d.Columns[i].Name == name {
				parts = append(parts, fmt.Sprintf("%s=%q", name, row[i]))
			}
		}
	}
	return strings.Join(parts, ", ")
}
