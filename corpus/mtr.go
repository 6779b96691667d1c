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
	// ServerOpts are the options mtr started the test's server with
	// beyond its my.cnf (the test's .opt and -master.opt files, its
	// combination's), as mtr --verbose prints them, for the last
	// combination run: the one whose binlog is replayed.
	ServerOpts []string
}

var resultLine = regexp.MustCompile(`(?m)^(\S+)(?: '[^']*')?\s+(?:w\d+ )?\[ (pass|fail|skipped|disabled) \]\s*(.*)$`)

// runMTR runs test (SUITE.TEST) alone under mtr in vardir, with a ROW
// binlog of the given row image and full row metadata.
func runMTR(ctx context.Context, mtrDir, vardir, test, image string) (*mtrRun, error) {
	args := []string{"mysql-test-run.pl", "--vardir=" + vardir, "--force", "--retry=0", "--max-test-fail=0",
		"--parallel=1", "--nocheck-testcases", "--testcase-timeout=10", "--verbose",
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
	var runs int
	r.Result, r.Comment, runs = mtrResult(r.Output, test)
	r.ServerOpts = serverOpts(r.Output)
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

// mtrResult is the last result mtr printed for test (SUITE.TEST or
// SUITE.TEST,COMBINATION), its comment, and how many runs it printed.
func mtrResult(out, test string) (result, comment string, runs int) {
	name, _, _ := strings.Cut(test, ",") // mtr names the combination apart: "SUITE.TEST 'COMBINATION'"
	for _, m := range resultLine.FindAllStringSubmatch(out, -1) {
		if m[1] == name || strings.HasSuffix(name, "."+m[1]) || strings.HasPrefix(m[1], name) {
			result, comment = m[2], strings.TrimSpace(m[3])
			runs++
		}
	}
	return result, comment, runs
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

// serverOpts reads the options mtr --verbose says it started the first
// server with ("mysqld_start:  ['--a', '--b=1']") for the last test run:
// the first start after the last result line before it, or the last
// group's when the server was not restarted between combinations.
func serverOpts(out string) []string {
	var opts []string
	fresh := true // no start seen since the last result line
	for _, l := range strings.Split(out, "\n") {
		if resultLine.MatchString(l) {
			fresh = true
			continue
		}
		_, list, ok := strings.Cut(l, "> mysqld_start: ")
		if !ok || !fresh {
			continue
		}
		fresh = false
		list = strings.TrimSpace(list)
		list = strings.TrimSuffix(strings.TrimPrefix(list, "['"), "']")
		opts = opts[:0:0]
		for _, o := range strings.Split(list, "', '") {
			if o = strings.TrimSpace(o); o != "" {
				opts = append(opts, o)
			}
		}
	}
	return opts
}

// optName is an option's name without dashes, "loose-" or a value, with
// "_" as "-": "--loose-innodb_page_size=4k" is "innodb-page-size".
func optName(o string) string {
	o = strings.TrimLeft(o, "-")
	o, _, _ = strings.Cut(o, "=")
	o = strings.ReplaceAll(strings.ToLower(o), "_", "-")
	o = strings.TrimPrefix(o, "loose-")
	return strings.TrimPrefix(o, "skip-")
}

// notShared are the server options a target does not take from the test:
// the binlog and replication ones (a target applies, it is not the
// source), and those naming the source's own files, ports and identity.
var notShared = []string{"log-bin", "binlog-", "log-slave-updates", "server-id", "gtid-", "sync-binlog",
	"master-", "relay-", "slave-", "replicate-", "log-basename", "sync-master-info", "sync-relay",
	"rpl-", "init-slave", "report-", "read-binlog-speed-limit",
	"datadir", "socket", "port", "pid-file", "log-error", "tmpdir", "basedir", "bind-address", "user",
	"general-log-file", "slow-query-log-file", "secure-file-priv", "networking",
	"plugin-dir", "lc-messages-dir", "log-tc", "grant-tables"}

// rebootstrap are the options with which mtr bootstraps the test's data
// directory afresh (its $rebootstrap_re): a target started from
// install.db cannot take them.
var rebootstrap = regexp.MustCompile(`innodb-(page-size|checksum-algorithm|undo-tablespaces|log-group-home-dir|data-home-dir)|data-file-path|force-rebootstrap`)

// TargetOptions splits the test's server options into those its targets
// start with and those they do not; it fails on an option with which no
// target can start from mtr's install.db.
func TargetOptions(opts []string) (keep, dropped []string, err error) {
	seen := map[string]bool{}
	for _, o := range opts {
		if seen[o] {
			continue // mtr repeats a suite's options per include
		}
		seen[o] = true
		n := optName(o)
		if _, v, _ := strings.Cut(o, "="); n == "innodb-page-size" && (strings.EqualFold(v, "16k") || v == "16384") {
			keep = append(keep, o) // install.db's own page size
			continue
		}
		if rebootstrap.MatchString(n) {
			return nil, nil, fmt.Errorf("the test's server option %s needs a data directory bootstrapped with it, which a target started from install.db is not: exclude it (server-options)", o)
		}
		shared := true
		for _, p := range notShared {
			if n == p || (strings.HasSuffix(p, "-") && strings.HasPrefix(n, p)) || strings.HasPrefix(n, p+"-") || strings.HasPrefix(n, p+"=") {
				shared = false
				break
			}
		}
		if shared {
			keep = append(keep, o)
		} else {
			dropped = append(dropped, o)
		}
	}
	return keep, dropped, nil
}
