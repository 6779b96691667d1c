package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/prepl/prepl/fault"
)

// The mapping options decide the names and types of the target's tables,
// so every run that writes them must use the ones they were made with:
// the first (prepl copy, or the first replicate or replay) stores them in
// prepl.mapping, and a later run with others is refused before it writes.

// mappingSQL creates the table of the mapping options (one row).
const mappingSQL = `CREATE TABLE IF NOT EXISTS ` + PositionSchema + `.mapping (
		one boolean PRIMARY KEY DEFAULT true CHECK (one),
		lowercase_names boolean NOT NULL,
		zero_dates_null boolean NOT NULL,
		postgis boolean NOT NULL)`

// ErrOptions is wrapped when a run's mapping options differ from those
// the target's tables were made with (fatal, package fault: the run
// must be given the same options).
var ErrOptions = fault.Fatal(errors.New("mapping options differ from the target's"))

// CheckOptions refuses a run whose options differ from those the
// target's tables were made with (see CheckOptions); a run that writes
// calls it first.
func (t *Target) CheckOptions(ctx context.Context) error { return CheckOptions(ctx, t.Pool, t.Opts) }

// CheckOptions stores o as the target's mapping options, or, when others
// are stored, refuses o naming the flags that differ.
func CheckOptions(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, o Options) error {
	var s Options
	err := q.QueryRow(ctx, `WITH ins AS (INSERT INTO `+PositionSchema+`.mapping (lowercase_names, zero_dates_null, postgis)
		VALUES ($1, $2, $3) ON CONFLICT (one) DO NOTHING RETURNING lowercase_names, zero_dates_null, postgis)
		SELECT * FROM ins UNION ALL SELECT lowercase_names, zero_dates_null, postgis FROM `+PositionSchema+`.mapping LIMIT 1`,
		o.LowercaseNames, o.ZeroDateNull, o.PostGIS).Scan(&s.LowercaseNames, &s.ZeroDateNull, &s.PostGIS)
	if err != nil {
		return fmt.Errorf("read the target's mapping options (%s.mapping): %w", PositionSchema, err)
	}
	if s == o {
		return nil
	}
	zero := map[bool]string{true: "null", false: "error"}
	return fmt.Errorf("%w: the target's tables were made with --lowercase-names=%t --zero-dates=%s --postgis=%t, this run has "+
		"--lowercase-names=%t --zero-dates=%s --postgis=%t: run with the target's (or start over on an empty database)",
		ErrOptions, s.LowercaseNames, zero[s.ZeroDateNull], s.PostGIS, o.LowercaseNames, zero[o.ZeroDateNull], o.PostGIS)
}
