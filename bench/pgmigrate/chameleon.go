package pgmigrate

// pg_chameleon, the system prepl is measured beside, run from its source:
// it is not on any package registry this machine reaches, so its code and
// that of the two libraries Debian lacks (python-mysql-replication and
// parsy) are taken from git mirrors of their public repositories at run
// time, never committed here. The other libraries are Debian's.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prepl/prepl/bench"
	"github.com/prepl/prepl/sandbox"
)

// debianModules are pg_chameleon's imports that Debian packages.
var debianModules = []struct{ module, pkg string }{
	{"pymysql", "python3-pymysql"},
	{"psycopg2", "python3-psycopg2"},
	{"yaml", "python3-yaml"},
	{"tabulate", "python3-tabulate"},
	{"daemonize", "python3-daemonize"},
	{"packaging", "python3-packaging"}, // python-mysql-replication's
	{"pkg_resources", "python3-pkg-resources"},
}

// mirrored are the pieces taken from a mirror of a public repository:
// the module's directory in the repository, copied to the module path.
var mirrored = []struct{ module, repo, dir string }{
	{"pymysqlreplication", "julien-duponchelle/python-mysql-replication", "pymysqlreplication"},
	{"parsy", "python-parsy/parsy", "src/parsy"},
}

// chameleonRepos are the names pg_chameleon's repository is known by
// (its author's account is the4thdoctor; older links say the3rdeye).
var chameleonRepos = []string{"the4thdoctor/pg_chameleon", "the3rdeye/pg_chameleon"}

// chameleon is pg_chameleon installed in a directory of its own, run as
// an unprivileged user (it refuses root) with a HOME of its own, which
// holds its configuration, pid and CSV files.
type chameleon struct {
	python  string
	pyPath  string // PYTHONPATH: pg_chameleon, the mirrored libraries, the rollbar stub
	script  string // scripts/chameleon.py
	home    string
	Version string // e.g. "pg_chameleon 2.0.21 (v2.0.21, commit 5458575), julien-duponchelle/python-mysql-replication 1.0.15, commit 5d2692e, ..."
}

// installChameleon lays pg_chameleon out in dir from the mirrors under
// mirror and checks that everything imports. Its error names each
// missing piece and how to get it.
func installChameleon(ctx context.Context, python, mirror, dir string) (*chameleon, error) {
	if _, err := exec.LookPath(python); err != nil {
		return nil, fmt.Errorf("pg_chameleon needs Python 3 (%s): apt-get install -y python3", python)
	}
	c := &chameleon{python: python, pyPath: filepath.Join(dir, "py"), home: filepath.Join(dir, "home")}
	if err := os.MkdirAll(c.pyPath, 0o755); err != nil {
		return nil, err
	}
	var missing, versions []string
	for _, m := range debianModules {
		if c.imports(ctx, m.module) != nil {
			missing = append(missing, fmt.Sprintf("Python module %s: apt-get install -y %s", m.module, m.pkg))
		}
	}
	for _, m := range mirrored {
		if c.imports(ctx, m.module) == nil {
			versions = append(versions, m.module+" (installed)")
			continue
		}
		gitDir, err := mirrorGitDir(mirror, m.repo)
		if err != nil {
			missing = append(missing, err.Error())
			continue
		}
		if err := extract(ctx, gitDir, m.dir, filepath.Join(c.pyPath, m.module)); err != nil {
			return nil, err
		}
		versions = append(versions, fmt.Sprintf("%s %s", m.repo, describe(gitDir)))
	}
	var chamGit string
	for _, r := range chameleonRepos {
		if g, err := mirrorGitDir(mirror, r); err == nil {
			chamGit = g
			break
		}
	}
	if chamGit == "" {
		missing = append(missing, fmt.Sprintf("pg_chameleon's code: no mirror of %s in %s (fetch that repository there)", chameleonRepos[0], mirror))
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("pg_chameleon cannot run; missing:\n  %s", strings.Join(missing, "\n  "))
	}
	src := filepath.Join(dir, "pg_chameleon-src")
	if err := extract(ctx, chamGit, "", src); err != nil {
		return nil, err
	}
	if err := os.Symlink(filepath.Join(src, "pg_chameleon"), filepath.Join(c.pyPath, "pg_chameleon")); err != nil {
		return nil, err
	}
	c.script = filepath.Join(src, "scripts", "chameleon.py")
	version, err := setupVersion(filepath.Join(src, "setup.py"))
	if err != nil {
		return nil, err
	}
	// chameleon.py asks pkg_resources for its own version: a dist-info
	// stands in for an installation.
	info := filepath.Join(c.pyPath, "pg_chameleon-"+version+".dist-info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(info, "METADATA"), []byte("Metadata-Version: 2.1\nName: pg_chameleon\nVersion: "+version+"\n"), 0o644); err != nil {
		return nil, err
	}
	// rollbar (error reporting to a web service, deprecated by
	// pg_chameleon and unused without a key) is a stub.
	if c.imports(ctx, "rollbar") != nil {
		stub := "def init(*args, **kwargs):\n    pass\n\n\ndef report_message(*args, **kwargs):\n    pass\n"
		if err := os.WriteFile(filepath.Join(c.pyPath, "rollbar.py"), []byte(stub), 0o644); err != nil {
			return nil, err
		}
	}
	if err := c.imports(ctx, "pg_chameleon"); err != nil {
		return nil, fmt.Errorf("pg_chameleon does not import: %w", err)
	}
	py, err := exec.CommandContext(ctx, c.python, "-c",
		`import platform, pymysql, psycopg2; print("Python %s, PyMySQL %s, psycopg2 %s" % (platform.python_version(), pymysql.__version__, psycopg2.__version__.split()[0]))`).Output()
	if err != nil {
		return nil, fmt.Errorf("%s: the versions of Python, PyMySQL and psycopg2: %v", c.python, err)
	}
	versions = append(versions, strings.TrimSpace(string(py)))
	c.Version = fmt.Sprintf("pg_chameleon %s (%s), %s", version, describe(chamGit), strings.Join(versions, ", "))
	// The unprivileged user reads the code and owns the home.
	for _, d := range []string{dir, c.pyPath} {
		if err := os.Chmod(d, 0o755); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// imports checks that python imports module with the PYTHONPATH so far.
func (c *chameleon) imports(ctx context.Context, module string) error {
	cmd := exec.CommandContext(ctx, c.python, "-c", "import "+module)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+c.pyPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("import %s: %v: %s", module, err, bench.Tail(string(out), 4))
	}
	return nil
}

// mirrorGitDir is the git directory of the mirror of repo (owner/name)
// in mirror (owner+name/repo, a bare repository or a clone).
func mirrorGitDir(mirror, repo string) (string, error) {
	base := filepath.Join(mirror, strings.Replace(repo, "/", "+", 1), "repo")
	for _, d := range []string{filepath.Join(base, ".git"), base} {
		if _, err := os.Stat(filepath.Join(d, "HEAD")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("%s: no mirror of github.com/%s in %s (fetch that repository there)", filepath.Base(repo), repo, mirror)
}

// extract writes path (a directory of the repository's HEAD, "" for all)
// into dst.
func extract(ctx context.Context, gitDir, path, dst string) error {
	tmp := dst + ".tmp"
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	args := []string{"--git-dir", gitDir, "archive", "--format=tar", "HEAD"}
	if path != "" {
		args = append(args, path)
	}
	archive := exec.CommandContext(ctx, "git", args...)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", tmp)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var errb bytes.Buffer
	archive.Stderr, untar.Stderr = &errb, &errb
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		untar.Wait()
		return fmt.Errorf("git archive %s of %s: %v: %s", path, gitDir, err, errb.String())
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("untar %s of %s: %v: %s", path, gitDir, err, errb.String())
	}
	if path == "" {
		return os.Rename(tmp, dst)
	}
	if err := os.Rename(filepath.Join(tmp, path), dst); err != nil {
		return err
	}
	return os.RemoveAll(tmp)
}

// describe names the commit a mirror's HEAD is at: its tag if any, and
// its short hash.
func describe(gitDir string) string {
	hash, _ := exec.Command("git", "--git-dir", gitDir, "rev-parse", "--short", "HEAD").Output()
	tag, err := exec.Command("git", "--git-dir", gitDir, "describe", "--tags").Output()
	if err != nil {
		return "commit " + strings.TrimSpace(string(hash))
	}
	return strings.TrimSpace(string(tag)) + ", commit " + strings.TrimSpace(string(hash))
}

var setupVersionRE = regexp.MustCompile(`(?m)^\s*version\s*=\s*["']([^"']+)["']`)

func setupVersion(setupPy string) (string, error) {
	b, err := os.ReadFile(setupPy)
	if err != nil {
		return "", err
	}
	m := setupVersionRE.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("no version= in %s", setupPy)
	}
	return string(m[1]), nil
}

// configure writes the configuration "default" (source "mysql") of a
// fresh HOME: the source's database db replicated into the schema of the
// same name on pg. Every setting not about where the servers are is the
// one of pg_chameleon's config-example.yml, but for errors, which stop
// the replica instead of dropping the table from it.
func (c *chameleon) configure(src *sandbox.Server, pg *sandbox.PGServer, db string) error {
	os.RemoveAll(c.home)
	// The directories `chameleon set_configuration_files` makes.
	conf := filepath.Join(c.home, ".pg_chameleon")
	confDir := filepath.Join(conf, "configuration")
	out := filepath.Join(c.home, "out")
	for _, d := range []string{confDir, filepath.Join(conf, "pid"), filepath.Join(conf, "logs"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	settings := map[string]any{
		"pid_dir": "~/.pg_chameleon/pid/", "log_dir": "~/.pg_chameleon/logs/", "log_dest": "stdout",
		"log_level": "info", "log_days_keep": 10, "rollbar_key": "", "rollbar_env": "",
		// The sandbox trusts its clients, but the password must not be
		// empty: pg_chameleon writes "password=%s port=%s" into a libpq
		// connection string, where an empty value takes "port=..." as
		// the password, and the default port is another server's.
		"pg_conn": map[string]any{"host": "127.0.0.1", "port": strconv.Itoa(pg.Port), "user": "postgres",
			"password": "unused", "database": "postgres", "charset": "utf8"},
		"sources": map[string]any{"mysql": map[string]any{
			"db_conn": map[string]any{"host": "127.0.0.1", "port": strconv.Itoa(src.Port), "user": "root",
				"password": "", "charset": "utf8", "connect_timeout": 10},
			"schema_mappings": map[string]string{db: db},
			"limit_tables":    nil, "skip_tables": nil, "grant_select_to": nil,
			"lock_timeout": "120s", "my_server_id": 100, "replica_batch_size": 10000, "replay_max_rows": 10000,
			"batch_retention": "1 day", "copy_max_memory": "300M", "copy_mode": "file", "out_dir": out,
			"sleep_loop": 1, "on_error_replay": "exit", "on_error_read": "exit", "auto_maintenance": "disabled",
			"gtid_enable": false, "type": "mysql", "keep_existing_schema": false, "net_read_timeout": 600,
		}},
	}
	b, err := json.MarshalIndent(settings, "", "  ") // JSON is YAML
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(confDir, "default.yml"), b, 0o600); err != nil {
		return err
	}
	return sandbox.ChownToPostgres(c.home)
}

// command is `chameleon.py verb --config default --source mysql`, logging
// to logPath.
func (c *chameleon) command(ctx context.Context, verb, logPath string) (*exec.Cmd, *os.File, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, err
	}
	args := []string{c.script, verb, "--config", "default"}
	if verb != "create_replica_schema" { // which refuses a source
		args = append(args, "--source", "mysql")
	}
	fmt.Fprintf(log, "$ %s %s\n", c.python, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, c.python, args...)
	cmd.Env = append(os.Environ(), "HOME="+c.home, "PYTHONPATH="+c.pyPath)
	cmd.Dir = c.home
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group: stopping it reaches the read and replay
	// processes it forks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: sandbox.PostgresUser(), Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd, log, nil
}

// run runs a command to its end and returns how long it took. pg_chameleon
// exits 0 after many of its errors: its log is searched for them too.
func (c *chameleon) run(ctx context.Context, verb, logPath string) (time.Duration, error) {
	cmd, log, err := c.command(ctx, verb, logPath)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	start := time.Now()
	err = cmd.Run()
	d := time.Since(start)
	if err == nil {
		err = logError(logPath)
	}
	if err != nil {
		return 0, fmt.Errorf("pg_chameleon %s: %v; its log (%s) ends:\n%s", verb, err, logPath, tailFile(logPath, 12))
	}
	return d, nil
}

// catchUp starts the replica (its read and replay processes) and waits
// until done reports that its replay has reached the source's end; it
// returns the time from the start to then, and stops the replica.
func (c *chameleon) catchUp(ctx context.Context, logPath string, done func() (bool, error)) (time.Duration, error) {
	cmd, log, err := c.command(ctx, "start_replica", logPath)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		// SIGINT is pg_chameleon's stop_replica: it ends the two
		// processes and marks the source stopped.
		syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := done()
		if err != nil {
			stop()
			return 0, err
		}
		if ok {
			d := time.Since(start)
			stop()
			return d, nil
		}
		select {
		case err := <-exited:
			return 0, fmt.Errorf("pg_chameleon start_replica ended (%v) before its replay reached the source's end; its log (%s) ends:\n%s",
				err, logPath, tailFile(logPath, 12))
		case <-ctx.Done():
			stop()
			return 0, fmt.Errorf("pg_chameleon start_replica: %w; its log (%s) ends:\n%s", ctx.Err(), logPath, tailFile(logPath, 12))
		case <-tick.C:
		}
		if err := logError(logPath); err != nil {
			stop()
			return 0, fmt.Errorf("pg_chameleon start_replica: %v; its log (%s) ends:\n%s", err, logPath, tailFile(logPath, 12))
		}
	}
}

// errLogRE matches the lines that say pg_chameleon failed: of its log
// format ("date time process LEVEL: message") and of what it prints
// ("ERROR - ...", "**FATAL - ..."). Not Python's tracebacks: one is
// printed at every exit of a command run in the foreground (daemonize's
// atexit handler calling sys.exit(0)); an uncaught one ends a command
// with a non-zero exit status, and the replica logs its processes' at
// level ERROR.
var errLogRE = regexp.MustCompile(`(?m)^(?:.* (?:ERROR|CRITICAL): |ERROR - |\*\*FATAL).*$`)

// logError returns the first error line pg_chameleon logged, if any.
func logError(logPath string) error {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return err
	}
	if m := errLogRE.Find(b); m != nil {
		return errors.New(strings.TrimSpace(string(m)))
	}
	return nil
}

// endMarked reports whether the row marking the end of the workload has
// reached pg.
func endMarked(ctx context.Context, pg *sql.DB, table string, id int) (bool, error) {
	var n int
	err := pg.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE id = $1", id).Scan(&n)
	if err != nil && strings.Contains(err.Error(), "does not exist") {
		return false, nil
	}
	return n > 0, err
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	return bench.Tail(string(b), n)
}
