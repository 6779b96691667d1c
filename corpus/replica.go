package corpus

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/scenario"
)

// MariaDB's replica as a second reference (Options.Replica): a server
// started on the test's binlog files as its own binlog serves them, and a
// replica target applies them with CHANGE MASTER TO ... MASTER_LOG_POS=4
// and START SLAVE UNTIL each checkpoint. Its state is compared with
// mariadb-binlog | mariadb's at every checkpoint the latter reached (a
// RefDiff where they differ: MariaDB's own tools disagree there, which the
// report shows next to prepl's divergences from mariadb-binlog | mariadb);
// past a failure of mariadb-binlog | mariadb, the replica's states are the
// reference prepl is compared with.

// RefDiff is MariaDB's replica differing from mariadb-binlog | mariadb at
// a checkpoint, or stopping on a step the latter applied.
type RefDiff struct {
	Test, Image string
	At          Checkpoint
	Stop        string // the replica's SQL thread error; "" for a difference
	Diff        string
}

func (d RefDiff) String() string {
	if d.Stop != "" {
		return fmt.Sprintf("REPLICA STOPS %s %s %s: %s", d.Test, d.Image, d.At, d.Stop)
	}
	return fmt.Sprintf("REFERENCES DIFFER %s %s %s (\"reference\" is mariadb-binlog | mariadb, \"target\" the replica):\n%s", d.Test, d.Image, d.At, indent(d.Diff))
}

// startMaster starts a server whose binlog is a copy of the test's files,
// from which a replica reads them.
func startMaster(ctx context.Context, dir, installDB string, files []string) (*sandbox.Server, error) {
	bdir := filepath.Join(dir, "master-binlog")
	if err := os.MkdirAll(bdir, 0o755); err != nil {
		return nil, err
	}
	var index strings.Builder
	for _, f := range files {
		dst := filepath.Join(bdir, filepath.Base(f))
		if out, err := exec.Command("cp", f, dst).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("copy %s: %v: %s", f, err, out)
		}
		index.WriteString(dst + "\n")
	}
	if err := os.WriteFile(filepath.Join(bdir, "mysqld-bin.index"), []byte(index.String()), 0o644); err != nil {
		return nil, err
	}
	o := sandbox.Defaults()
	o.ServerID = 2
	o.FromDataDir = installDB
	o.Flags = []string{"--character-set-server=latin1", "--collation-server=latin1_swedish_ci",
		"--innodb-log-file-size=10M", "--innodb-buffer-pool-size=32M",
		"--log-bin=" + filepath.Join(bdir, "mysqld-bin"), "--log-bin-index=" + filepath.Join(bdir, "mysqld-bin.index"),
		"--binlog-format=ROW", "--max-allowed-packet=1G"}
	return sandbox.Start(ctx, o)
}

// replicaRun applies the binlog with MariaDB's replica up to each
// checkpoint and compares its state with the reference's (refs) where the
// reference reached; it ends at the replica's first stop or difference.
// Past the reference's failure, it returns its own states (written under
// dir), which prepl is then judged against.
func replicaRun(ctx context.Context, o Options, r *TestResult, installDB string, files []string, cps []Checkpoint, refs []refDump, start func() (*target, error), dir string) ([]refDump, error) {
	t, err := start()
	if err != nil {
		return nil, fmt.Errorf("start the replica: %w", err)
	}
	defer t.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	m, err := startMaster(ctx, dir, installDB, files)
	if err != nil {
		return nil, fmt.Errorf("start the replica's source: %w", err)
	}
	defer m.Close()
	if _, err := t.db.ExecContext(ctx, "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT="+strconv.Itoa(m.Port)+
		", MASTER_USER='root', MASTER_PASSWORD='', MASTER_USE_GTID=no, MASTER_LOG_FILE='"+filepath.Base(files[0])+"', MASTER_LOG_POS=4"); err != nil {
		return nil, fmt.Errorf("CHANGE MASTER: %w", err)
	}
	defer t.db.Exec("STOP SLAVE")
	var more []refDump
	for i, cp := range cps {
		file, pos := filepath.Base(files[cp.File]), cp.Offset
		if cp.End() {
			st, err := os.Stat(files[cp.File])
			if err != nil {
				return more, err
			}
			pos = st.Size()
		}
		var stopErr string
		timed(&r.ReplicaTime, func() { stopErr, err = t.replicaUntil(ctx, file, pos) })
		if err != nil {
			return more, fmt.Errorf("%s: %w", cp, err)
		}
		if stopErr != "" {
			if i >= len(refs) {
				r.ReplicaFail = fmt.Sprintf("%s: %s", cp, stopErr)
				return more, nil
			}
			d := RefDiff{Test: r.Test, Image: r.Image, At: cp, Stop: stopErr}
			r.RefDiffs = append(r.RefDiffs, d)
			o.Say(d.String())
			return nil, nil
		}
		var lines []string
		timed(&r.DumpTime, func() { lines, err = t.dump(ctx) })
		if err != nil {
			return more, fmt.Errorf("dump the replica %s: %w", cp, err)
		}
		r.ReplicaCheckpoints++
		if i >= len(refs) {
			d := refDump{sum: sumLines(lines), path: filepath.Join(dir, fmt.Sprintf("%04d.json", i))}
			b, _ := json.Marshal(lines)
			if err := os.WriteFile(d.path, b, 0o644); err != nil {
				return more, err
			}
			more = append(more, d)
			continue
		}
		if sumLines(lines) == refs[i].sum {
			continue
		}
		want, err := readDump(refs[i].path)
		if err != nil {
			return nil, err
		}
		d := RefDiff{Test: r.Test, Image: r.Image, At: cp, Diff: scenario.Diff(want, lines)}
		r.RefDiffs = append(r.RefDiffs, d)
		o.Say(d.String())
		return nil, nil
	}
	return more, nil
}

// replicaUntil runs the replica's SQL thread up to file:pos (START SLAVE
// UNTIL) and waits for it to stop; it returns the SQL thread's error, if
// that is why it stopped.
func (t *target) replicaUntil(ctx context.Context, file string, pos int64) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if _, err := t.db.ExecContext(ctx, fmt.Sprintf("START SLAVE UNTIL MASTER_LOG_FILE='%s', MASTER_LOG_POS=%d", file, pos)); err != nil {
		return "", err
	}
	for {
		st, err := slaveStatus(ctx, t.db)
		if err != nil {
			return "", err
		}
		if st["Last_SQL_Errno"] != "" && st["Last_SQL_Errno"] != "0" {
			return "Error " + st["Last_SQL_Errno"] + ": " + oneLine(st["Last_SQL_Error"]), nil
		}
		if st["Slave_SQL_Running"] == "No" {
			if st["Relay_Master_Log_File"] == file {
				if p, _ := strconv.ParseInt(st["Exec_Master_Log_Pos"], 10, 64); p < pos {
					return "", fmt.Errorf("the SQL thread stopped at %s:%d, before %d", file, p, pos)
				}
			}
			return "", nil
		}
		if st["Last_IO_Errno"] != "" && st["Last_IO_Errno"] != "0" {
			return "", fmt.Errorf("the replica's IO thread: Error %s: %s", st["Last_IO_Errno"], st["Last_IO_Error"])
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the SQL thread did not reach %s:%d in %s (at %s:%s)", file, pos, stepTimeout, st["Relay_Master_Log_File"], st["Exec_Master_Log_Pos"])
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func slaveStatus(ctx context.Context, db *sql.DB) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	st := map[string]string{}
	if !rows.Next() {
		return st, rows.Err()
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	for i, c := range cols {
		st[c] = vals[i].String
	}
	return st, rows.Err()
}
