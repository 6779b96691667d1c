package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// ErrNoMTR is returned when MariaDB's test suite is not installed.
var ErrNoMTR = errors.New("mysql-test-run.pl not found: install Debian's mariadb-test (apt-get install -y mariadb-test, or make deps), or give its directory with --mtr-dir")

// MTRDirs are where Debian's mariadb-test installs mysql-test-run.pl.
var MTRDirs = []string{"/usr/share/mysql/mysql-test", "/usr/share/mariadb/mysql-test", "/usr/share/mariadb-test"}

// FindMTR returns the directory holding mysql-test-run.pl.
func FindMTR(dir string) (string, error) {
	dirs := MTRDirs
	if dir != "" {
		dirs = []string{dir}
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "mysql-test-run.pl")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoMTR
}

// Images are the binlog_row_image values the corpus runs with.
var Images = []string{"FULL", "MINIMAL", "NOBLOB"}

// mtrRun is what one test's mtr run left: its binlog files and the
// system database mtr bootstrapped, which the targets start from so that
// mysql.* (time zones, accounts, the mtr schema) match the source's.
type mtrRun struct {
	Result    string // pass, fail, skipped, or "" when mtr printed none
	Comment   string // why it was skipped or failed, as mtr says
	Binlogs   []string
	InstallDB string
	Output    string
}

var resultLine = regexp.MustCompile(`(?m)^(\S+)(?: '[^']*')?\s+(?:w\d+ )?\[ (pass|fail|skipped|disabled) \]\s*(.*)$`)

// runMTR runs test (SUITE.TEST) alone under mtr in vardir, with a ROW
// binlog of the given row image and full row metadata.
func runMTR(ctx context.Context, mtrDir, vardir, test, image string) (*mtrRun, error) {
	args := []string{"mysql-test-run.pl", "--vardir=" + vardir, "--force", "--retry=0", "--max-test-fail=0",
		"--parallel=1", "--nocheck-testcases", "--testcase-timeout=10",
		"--mysqld=--log-bin", "--mysqld=--binlog-format=ROW", "--mysqld=--binlog-row-image=" + image,
		"--mysqld=--binlog-row-metadata=FULL", test}
	cmd := exec.CommandContext(ctx, "perl", args...)
	cmd.Dir = mtrDir
	// mtr would otherwise take its build thread (its ports) from the
	// environment of an mtr run around this one.
	cmd.Env = append(os.Environ(), "MTR_BUILD_THREAD=auto")
	// mtr's servers go with it when the run is interrupted.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	r := &mtrRun{Output: out.String(), InstallDB: filepath.Join(vardir, "install.db")}
	runs := 0
	for _, m := range resultLine.FindAllStringSubmatch(r.Output, -1) {
		if m[1] == test || strings.HasSuffix(test, "."+m[1]) || strings.HasPrefix(m[1], test) {
			r.Result, r.Comment = m[2], strings.TrimSpace(m[3])
			runs++
		}
	}
	if runs > 1 {
		// Each combination restarts the server on a fresh data directory.
		r.Comment = strings.TrimSpace(fmt.Sprintf("%s (%d combinations: the binlog is the last one's; list SUITE.TEST,COMBINATION to pick one)", r.Comment, runs))
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	if r.Result == "" {
		return r, fmt.Errorf("mtr %s: no result (%v): %s", test, err, lastLines(r.Output, 8))
	}
	r.Binlogs, err = binlogFiles(filepath.Join(vardir, "mysqld.1", "data"))
	if err == nil && len(r.Binlogs) == 0 {
		// After a failure mtr moves the server's directory to
		// log/TEST[-COMBINATIONS]/.
		saved, _ := filepath.Glob(filepath.Join(vardir, "log", "*", "mysqld.1", "data"))
		for _, d := range saved {
			if r.Binlogs, err = binlogFiles(d); err != nil || len(r.Binlogs) > 0 {
				break
			}
		}
	}
	return r, err
}

var binlogName = regexp.MustCompile(`^mysqld-bin\.(\d{6,})$`)

// binlogFiles lists the server's binlog files (log-basename=mysqld) in
// order.
func binlogFiles(dataDir string) ([]string, error) {
	ents, err := os.ReadDir(dataDir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	type f struct {
		n    int
		path string
	}
	var fs []f
	for _, e := range ents {
		if m := binlogName.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			fs = append(fs, f{n, filepath.Join(dataDir, e.Name())})
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].n < fs[j].n })
	var out []string
	for _, x := range fs {
		out = append(out, x.path)
	}
	return out, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
