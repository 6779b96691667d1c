package postgres

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/prepl/prepl/snapshot"
)

// CopyTarget is prepl copy's writer into PostgreSQL (a snapshot.Target):
// tables created without their keys, rows by COPY, the keys built after
// the rows (FinishTable), the foreign keys after every table's
// (FinishCopy).
type CopyTarget struct {
	Pool *pgxpool.Pool
	Opts Options
}

var _ snapshot.Target = (*CopyTarget)(nil)

// copySetup creates prepl's schema on a PostgreSQL target: the tables of
// replication (SetupSQL: the position, the source's table definitions)
// and the copy's snapshot and progress.
var copySetup = append(append([]string{}, SetupSQL...),
	`CREATE TABLE IF NOT EXISTS prepl.copy_snapshot (
		channel varchar(64) PRIMARY KEY, gtid_pos text NOT NULL, file varchar(512) NOT NULL, pos bigint NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS prepl.copy_progress (
		channel varchar(64) NOT NULL, schema_name text NOT NULL, table_name text NOT NULL, part int NOT NULL,
		last_key text NOT NULL, hi_key text NOT NULL, rows_copied bigint NOT NULL DEFAULT 0, done boolean NOT NULL DEFAULT false,
		PRIMARY KEY (channel, schema_name, table_name, part))`,
)

// OpenCopy connects to a PostgreSQL target.
func OpenCopy(ctx context.Context, url string, o Options) (*CopyTarget, error) {
	// Rows never fire the target's triggers (nor its foreign keys, which
	// are triggers): they are the source's effects already. Needs superuser.
	cfg, err := ParseConfig(url)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to target: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to target (session_replication_role=replica needs a superuser): %w", err)
	}
	return &CopyTarget{Pool: pool, Opts: o}, nil
}

func (t *CopyTarget) Close() error { t.Pool.Close(); return nil }

func (t *CopyTarget) Prepare(ctx context.Context, channel string) error {
	for _, q := range copySetup {
		if _, err := t.Pool.Exec(ctx, q); err != nil {
			return err
		}
	}
	return CheckOptions(ctx, t.Pool, t.Opts)
}

func (t *CopyTarget) Snapshot(ctx context.Context, channel string) (snapshot.Position, bool, error) {
	var p snapshot.Position
	var pos int64
	err := t.Pool.QueryRow(ctx, "SELECT gtid_pos, file, pos FROM prepl.copy_snapshot WHERE channel = $1", channel).Scan(&p.GTIDPos, &p.File, &pos)
	if err == pgx.ErrNoRows {
		return p, false, nil
	}
	p.Pos = uint32(pos)
	return p, err == nil, err
}

func (t *CopyTarget) BeginSnapshot(ctx context.Context, channel string, p snapshot.Position) error {
	_, err := t.Pool.Exec(ctx, "INSERT INTO prepl.copy_snapshot VALUES ($1, $2, $3, $4)", channel, p.GTIDPos, p.File, int64(p.Pos))
	return err
}

// NoteForeignKeys does nothing: every key waits for the rows, the
// foreign keys for every table's keys (FinishCopy).
func (t *CopyTarget) NoteForeignKeys([]*TableDef) {}

// CreateTable creates the table unless it exists, and stores the
// source's definition (create, SHOW CREATE TABLE) in prepl.tables, where
// replicate reads the source's column types. The table is created
// without its primary key, unique keys and indexes: FinishTable builds
// each once the rows are in, in one sort rather than row by row, as
// pg_chameleon does. Resuming needs no key: every chunk commits with its
// progress row, so a resumed copy never writes a row twice.
func (t *CopyTarget) CreateTable(ctx context.Context, channel string, d *TableDef, create string) error {
	var exists bool
	if err := t.Pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", Table(d.Schema, d.Name, t.Opts)).Scan(&exists); err != nil {
		return err
	}
	var stmts []string
	if !exists {
		// The whole definition first: an index PostgreSQL cannot build
		// fails here, before any row is copied.
		if _, err := CreateTable(d, t.Opts); err != nil {
			return err
		}
		bare := *d
		bare.Indexes = nil
		var err error
		if stmts, err = CreateTable(&bare, t.Opts); err != nil {
			return err
		}
	}
	tx, err := t.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	q, args := StoreDefSQL(d, create)
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("store the definition of %s.%s: %w", d.Schema, d.Name, err)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return tx.Commit(ctx)
}

func (t *CopyTarget) Progress(ctx context.Context, channel string, d *TableDef) ([]snapshot.Part, error) {
	rows, err := t.Pool.Query(ctx, "SELECT part, last_key, hi_key, done FROM prepl.copy_progress WHERE channel = $1 AND schema_name = $2 AND table_name = $3 ORDER BY part",
		channel, d.Schema, d.Name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return snapshot.ScanParts(rows)
}

func (t *CopyTarget) PlanParts(ctx context.Context, channel string, d *TableDef, parts []snapshot.Part) error {
	tx, err := t.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, p := range parts {
		if _, err := tx.Exec(ctx, "INSERT INTO prepl.copy_progress (channel, schema_name, table_name, part, last_key, hi_key) VALUES ($1, $2, $3, $4, $5, $6)",
			channel, d.Schema, d.Name, p.N, snapshot.EncodeKey(p.Last), snapshot.EncodeKey(p.Hi)); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

func (t *CopyTarget) WriteChunk(ctx context.Context, channel string, d *TableDef, part int, rows [][][]byte, last []string, done bool) error {
	size := 0
	for _, row := range rows {
		for _, v := range row {
			size += len(v) + 1
		}
	}
	buf := make([]byte, 0, size+size/8)
	for _, row := range rows {
		for i, v := range row {
			if i > 0 {
				buf = append(buf, '\t')
			}
			if v == nil {
				buf = AppendCopy(buf, "", true)
				continue
			}
			var err error
			if buf, err = AppendCopyText(buf, v, &d.Columns[i], t.Opts); err != nil {
				return fmt.Errorf("row %s: %w", snapshot.KeyOf(d, row), err)
			}
		}
		buf = append(buf, '\n')
	}
	cols := make([]string, len(d.Columns))
	for i := range d.Columns {
		cols[i] = Ident(d.Columns[i].Name, t.Opts)
	}
	tx, err := t.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if len(rows) > 0 {
		copySQL := "COPY " + Table(d.Schema, d.Name, t.Opts) + " (" + strings.Join(cols, ", ") + ") FROM STDIN"
		if _, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(buf), copySQL); err != nil {
			return fmt.Errorf("COPY into %s.%s: %w", d.Schema, d.Name, err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE prepl.copy_progress SET last_key = $4, rows_copied = rows_copied + $5, done = $6
		WHERE channel = $1 AND schema_name = $2 AND table_name = $3 AND part = $7`, channel, d.Schema, d.Name, snapshot.EncodeKey(last), len(rows), done, part); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// FinishTable builds the table's primary key, unique keys and indexes,
// each unless it exists (a resumed copy may have built it), then sets its
// identity sequence after the copied rows.
func (t *CopyTarget) FinishTable(ctx context.Context, d *TableDef) error {
	tbl := Table(d.Schema, d.Name, t.Opts)
	var stmts []string
	if pk := d.PrimaryKey(); pk != nil {
		var exists bool
		if err := t.Pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p')", tbl).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			cols := make([]string, len(pk.Columns))
			for i, c := range pk.Columns {
				cols[i] = Ident(c, t.Opts)
			}
			stmts = append(stmts, "ALTER TABLE "+tbl+" ADD CONSTRAINT "+Ident(IndexName(d.Name, pk.Name), t.Opts)+
				" PRIMARY KEY ("+strings.Join(cols, ", ")+")")
		}
	}
	all, err := CreateTable(d, t.Opts)
	if err != nil {
		return err
	}
	for _, q := range all {
		for _, create := range []string{"CREATE UNIQUE INDEX ", "CREATE INDEX "} {
			if strings.HasPrefix(q, create) {
				stmts = append(stmts, create+"IF NOT EXISTS "+strings.TrimPrefix(q, create))
			}
		}
	}
	for _, q := range stmts {
		if _, err := t.Pool.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	for _, c := range d.Columns {
		if !c.AutoInc || (c.Unsigned && c.Type == "bigint") {
			continue
		}
		col := Ident(c.Name, t.Opts)
		// The identity continues after the copied rows, as AUTO_INCREMENT would.
		q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence(%s, %s), GREATEST(max(%s), 1)) FROM %s",
			QuoteString(tbl), QuoteString(strings.Trim(col, `"`)), col, tbl)
		if _, err := t.Pool.Exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// FinishCopy adds every table's foreign keys, once every table has its
// keys: a foreign key needs the key it references.
func (t *CopyTarget) FinishCopy(ctx context.Context, defs []*TableDef) error {
	for _, d := range defs {
		tbl := Table(d.Schema, d.Name, t.Opts)
		for _, q := range ForeignKeySQL(d, t.Opts) {
			// A resumed copy may have added the key already; the statements
			// after it (enabling its cascades) can run again.
			if i := strings.Index(q, "ADD CONSTRAINT "); i >= 0 {
				name := q[i+len("ADD CONSTRAINT "):]
				name = name[:strings.Index(name, " FOREIGN")]
				var exists bool
				t.Pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = $1::regclass AND conname = $2)",
					tbl, strings.Trim(name, `"`)).Scan(&exists)
				if exists {
					continue
				}
			}
			if _, err := t.Pool.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s.%s: %s: %w", d.Schema, d.Name, q, err)
			}
		}
	}
	return nil
}

func (t *CopyTarget) StorePosition(ctx context.Context, channel string, p snapshot.Position) error {
	tx, err := t.Pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO prepl.position (channel, slot, gtid_pos, file, pos, last_gtid, floor_gtid, floor_file, floor_pos)
		VALUES ($1, 'main', $2, $3, $4, '', $2, $3, $4)
		ON CONFLICT (channel, slot) DO UPDATE SET gtid_pos = EXCLUDED.gtid_pos, file = EXCLUDED.file, pos = EXCLUDED.pos,
		floor_gtid = EXCLUDED.floor_gtid, floor_file = EXCLUDED.floor_file, floor_pos = EXCLUDED.floor_pos, updated_at = now()`,
		channel, p.GTIDPos, p.File, int64(p.Pos)); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "DELETE FROM prepl.copy_snapshot WHERE channel = $1", channel); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "DELETE FROM prepl.copy_progress WHERE channel = $1", channel); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
