package snapshot

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/prepl/prepl/postgres"
)

// Target is where a copy writes: MySQL (MySQLTarget) or PostgreSQL
// (PGTarget). Every chunk commits with its progress row, so a copy
// killed at any point resumes from the last committed chunk.
type Target interface {
	// Prepare creates prepl's tables (position, copy_progress, copy_snapshot).
	Prepare(ctx context.Context, channel string) error
	// Snapshot returns the position an earlier, unfinished copy of this
	// channel began at (started false when none).
	Snapshot(ctx context.Context, channel string) (p Position, started bool, err error)
	// BeginSnapshot records the position a copy begins at.
	BeginSnapshot(ctx context.Context, channel string, p Position) error
	// CreateTable creates the table unless it exists (a resumed copy).
	CreateTable(ctx context.Context, channel string, t *postgres.TableDef, showCreate string) error
	// Progress returns the table's parts as planned (none before PlanParts).
	Progress(ctx context.Context, channel string, t *postgres.TableDef) ([]Part, error)
	// PlanParts records the parts a table is copied in, before any row.
	PlanParts(ctx context.Context, channel string, t *postgres.TableDef, parts []Part) error
	// WriteChunk writes rows (source text read through
	// postgres.SourceExpr, nil for NULL) and the progress of their part in
	// one transaction.
	WriteChunk(ctx context.Context, channel string, t *postgres.TableDef, part int, rows [][][]byte, last []string, done bool) error
	// FinishTable runs what waits for the table's rows (PostgreSQL: its
	// keys and indexes, identity sequences), as soon as they are all
	// copied. A resumed copy runs it again: it skips what is done.
	FinishTable(ctx context.Context, t *postgres.TableDef) error
	// FinishCopy runs what waits for every table's keys (PostgreSQL:
	// foreign keys), after FinishTable of every table; again on resume.
	FinishCopy(ctx context.Context, tables []*postgres.TableDef) error
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

// encodeKey writes a key for a progress row: JSON of base64 values, as
// a binary key's bytes are not UTF-8, which a JSON string would turn into
// U+FFFD (and a resumed copy would start from another key).
// partRows is what scanParts reads: *sql.Rows (MySQL) or pgx.Rows
// (PostgreSQL) of `SELECT part, last_key, hi_key, done`.
type partRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanParts reads a table's parts from prepl.copy_progress.
func scanParts(rows partRows) ([]Part, error) {
	var parts []Part
	for rows.Next() {
		var p Part
		var last, hi string
		if err := rows.Scan(&p.N, &last, &hi, &p.Done); err != nil {
			return nil, err
		}
		p.Last, p.Hi = decodeKey(last), decodeKey(hi)
		parts = append(parts, p)
	}
	return parts, rows.Err()
}

func encodeKey(k []string) string {
	var bs [][]byte // nil stays nil: no key (yet)
	for _, v := range k {
		bs = append(bs, []byte(v))
	}
	b, _ := json.Marshal(bs)
	return string(b)
}

func decodeKey(s string) []string {
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

// Open opens the target of a URL: postgres:// or postgresql:// for
// PostgreSQL, anything else for MySQL.
func Open(ctx context.Context, url string, o postgres.Options) (Target, error) {
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		return OpenPG(ctx, url, o)
	}
	return OpenMySQL(ctx, url)
}
