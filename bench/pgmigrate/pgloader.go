package pgmigrate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// pgloader is Debian's pgloader, the copy peer that installs from the
// distribution (pgloader has no change capture: it copies only).
type pgloader struct {
	bin     string
	Version string
}

// findPgloader finds pgloader on PATH (make bench-pg installs Debian's).
func findPgloader(ctx context.Context) (*pgloader, error) {
	bin, err := exec.LookPath("pgloader")
	if err != nil {
		return nil, fmt.Errorf("pgloader is not installed: apt-get install -y pgloader (make bench-pg does)")
	}
	out, _ := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	v := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if v == "" {
		v = "pgloader"
	}
	return &pgloader{bin: bin, Version: v}, nil
}

// loadFile is pgloader's command: the source database into the target,
// tables created with their keys and indexes, in the schema named after
// the database as prepl copy does. Debian's pgloader 3.6 exhausts its
// heap with its default batches on these tables: 10,000 rows a batch
// and prefetched keep it within it.
func loadFile(src *sandbox.Server, pg *sandbox.PGServer, workers int) string {
	return fmt.Sprintf(`LOAD DATABASE
     FROM mysql://root@%s/%s
     INTO postgresql://postgres@%s/postgres
WITH include drop, create tables, create indexes, reset sequences, foreign keys,
     workers = %d, concurrency = 1, prefetch rows = 10000, batch rows = 10000
;
`, src.Addr(), DB, pg.Addr(), max(workers, 1))
}

// copy runs pgloader, its output logged to logPath.
func (p *pgloader) copy(ctx context.Context, src *sandbox.Server, pg *sandbox.PGServer, workers int, logPath string) (time.Duration, error) {
	cmdFile := strings.TrimSuffix(logPath, ".log") + ".load"
	if err := os.WriteFile(cmdFile, []byte(loadFile(src, pg, workers)), 0o644); err != nil {
		return 0, err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, p.bin, "--no-ssl-cert-verification", "--root-dir", filepath.Join(filepath.Dir(logPath), "pgloader-work"), cmdFile)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("pgloader: %v; its output (%s) ends:\n%s", err, logPath, tailFile(logPath, 12))
	}
	return d, nil
}
