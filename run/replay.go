package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/sourceend"
	"github.com/prepl/prepl/txn"
)

// Replay applies o.Files, in order, to the target, from the position the
// target stores on o.Target.Channel; with o.DryRun it applies nothing. It
// refuses files that do not form one stream before anything is applied.
func Replay(ctx context.Context, o Options) (Summary, error) {
	r := newRunner(o, "replay")
	defer r.close()
	sel := o.Select
	if sel == nil {
		sel = &Selection{skipGTID: map[string]bool{}, skipPos: map[txn.Position]bool{}, loc: time.Local}
	}
	sel.logSelection(r.log)
	r.cfg.Filter = withTables(o.Tables, r.log, sel.filter)

	// The continuity check reads the files from disk while the target is
	// set up over the network: each waits on something else.
	gtidSeen, inFiles := sel.scanGTIDs()
	scanned := scanFiles(o.Files, gtidSeen)
	dry := o.DryRun != nil
	if !dry || o.Target.URL != "" {
		if err := r.open(ctx, !dry); err != nil {
			return Summary{}, stoppedWaiting(err)
		}
	}
	sums, err := checkFileSet(<-scanned, r.res, sel.spec.StartGTID, o.AllowGaps, r.log)
	if err != nil {
		return Summary{}, err
	}
	if err := sel.checkFiles(sums, inFiles); err != nil {
		return Summary{}, err
	}
	if my := MySQL(r.tgt); my != nil && o.Target.KeepGTID && my.IsMariaDB {
		for _, s := range sums {
			if s.Flavor == txn.MySQL {
				return Summary{}, fmt.Errorf("%w: --keep-gtid: %s is a MySQL binlog and the target is MariaDB: a MariaDB server cannot carry a "+
					"MySQL GTID (uuid:n), so no transaction could keep its GTID; replay without --keep-gtid (the target's own "+
					"binlog then gives each transaction a MariaDB GTID)", ErrUsage, s.Name)
			}
		}
	}
	fo := fileset.Options{Limits: o.Limits, ReadAheadBytes: o.ReadAheadBytes, Skip: func(gtid string, start txn.Position) bool {
		return gtid != "" && sel.skipGTID[gtid] || sel.skipPos[start]
	}}
	if res := r.res; res.Found {
		for _, f := range o.Files {
			if filepath.Base(f) == res.Position.File {
				fo.StartFile, fo.StartOffset = res.Position.File, res.Position.Pos
			}
		}
		r.log.Info("resuming from the target's stored position", "file", res.Position.File, "pos", res.Position.Pos,
			"gtid", res.Position.GTIDPos, "channel", o.Target.Channel)
	}
	rd, err := fileset.Open(o.Files, fo)
	if err != nil {
		return Summary{}, err
	}
	defer rd.Close()
	if dry {
		err := dryRun(ctx, o.DryRun, rd, r.cfg.Filter, MySQL(r.tgt), !r.cfg.NoCompact, sel.loc)
		if err != nil {
			return Summary{}, err
		}
		return Summary{Warnings: sel.warnings(unmatchedIncludes(o.Tables))}, sel.startInside
	}
	wo := watchOptions{info: metrics.Info{Command: "replay", Source: filesSource(o.Files), Target: r.tgt.String()},
		end: sourceend.NewFiles(o.Files), bar: true}
	sum, err := r.apply(ctx, rd, wo, func(err error) error {
		if err == nil {
			return sel.startInside
		}
		return err
	})
	if !sum.Ran {
		return sum, err
	}
	if err == nil {
		sum.Warnings = sel.warnings(unmatchedIncludes(o.Tables))
	}
	var refused *gomysql.MySQLError
	var pgRefused *pgconn.PgError
	if errors.As(err, &refused) || errors.As(err, &pgRefused) {
		applied := "nothing of that transaction is applied"
		if half, _ := r.tgt.HalfApplied(ctx, o.Target.Channel); half != "" {
			// A non-transactional table keeps what ran before the error.
			applied = "but " + half
		}
		err = fmt.Errorf("%w\n%s. To go on without it (after checking what it does, with "+
			"--dry-run --print-sql): the same command with --skip-gtid GTID, or --skip-position FILE:OFFSET for a "+
			"transaction without GTID", err, applied)
	}
	return sum, err
}
