// Package sandbox starts throwaway mariadbd instances in temporary
// directories on free ports, for tests, the demo and the benchmark.
//
// A data directory is created once per process with mariadb-install-db
// and copied for each instance, so an instance starts in about a second.
package sandbox

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/go-sql-driver/mysql"
)

// ErrNoServer is returned when mariadbd or mariadb-install-db is not installed.
var ErrNoServer = errors.New("mariadbd not found: install it with `apt-get install -y mariadb-server` (or run `make deps`)")

// Options configure one instance. The zero value is a server with the binlog
// off and the server's default durability.
type Options struct {
	ServerID        uint32 // default 1
	Binlog          bool   // log_bin with binlog_format=ROW
	LogSlaveUpdates bool
	GTIDDomain      uint32
	// BinlogFormat overrides ROW (e.g. "STATEMENT" to test refusal).
	BinlogFormat string
	// BinlogRowMetadata: "", "NO_LOG", "MINIMAL" or "FULL"; "" keeps the server default.
	BinlogRowMetadata string
	// BinlogRowImage: "", "FULL", "MINIMAL", "NOBLOB".
	BinlogRowImage string
	// Durability; -1 keeps the server default.
	SyncBinlog          int
	FlushLogAtTrxCommit int
	CommitWaitCount     int // binlog_commit_wait_count
	CommitWaitUsec      int // binlog_commit_wait_usec
	// FromDataDir copies this data directory instead of a fresh one (a
	// snapshot taken with Server.CopyDataDir).
	FromDataDir string
	// Flags are extra mariadbd flags, e.g. "--max-connections=500".
	Flags []string
	// SSLCA, SSLCert, SSLKey turn TLS on with these PEM files (MakeCerts);
	// RequireSecureTransport refuses plain TCP clients. The sandbox's own
	// connections (DSN, Open) then use TLS without checking the certificate.
	SSLCA, SSLCert, SSLKey string
	RequireSecureTransport bool
}

// Defaults returns Options with durability left at the server's defaults.
func Defaults() Options { return Options{SyncBinlog: -1, FlushLogAtTrxCommit: -1} }

// Server is a running (or stopped) sandbox instance.
type Server struct {
	Dir    string // holds data/, the socket, the logs
	Port   int
	Socket string
	opts   Options
	galera *galeraNode // nil when the server is no Galera node
	process
}

// DataDir is the instance's data directory.
func (s *Server) DataDir() string { return filepath.Join(s.Dir, "data") }

// BinlogDir is where binlog files are written.
func (s *Server) BinlogDir() string { return filepath.Join(s.Dir, "binlog") }

// Addr is host:port for TCP clients.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// URL is the prepl connection URL of the instance, as root.
func (s *Server) URL() string { return "mysql://root@" + s.Addr() }

// DSN is a go-sql-driver DSN for the instance and database db.
func (s *Server) DSN(db string) string {
	c := mysql.NewConfig()
	c.User = "root"
	c.Net = "tcp"
	c.Addr = s.Addr()
	c.DBName = db
	c.MultiStatements = true
	c.InterpolateParams = true
	if s.opts.SSLCert != "" {
		c.TLSConfig = "skip-verify"
	}
	return c.FormatDSN()
}

// Open returns a *sql.DB on database db.
func (s *Server) Open(db string) (*sql.DB, error) { return sql.Open("mysql", s.DSN(db)) }

// Start creates and starts an instance.
func Start(ctx context.Context, opts Options) (*Server, error) { return start(ctx, opts, nil) }

func start(ctx context.Context, opts Options, g *galeraNode) (*Server, error) {
	if _, err := exec.LookPath(mariadbd()); err != nil {
		return nil, ErrNoServer
	}
	if opts.ServerID == 0 {
		opts.ServerID = 1
	}
	dir, err := os.MkdirTemp("", "prepl-sb-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s := &Server{Dir: dir, Socket: filepath.Join(dir, "mysql.sock"), opts: opts, galera: g}
	src := opts.FromDataDir
	if src == "" {
		if src, err = template(ctx); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := copyDir(src, s.DataDir()); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: copy data dir: %w", err)
	}
	if err := os.MkdirAll(s.BinlogDir(), 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.Restart(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Restart starts a stopped or killed instance on its data directory, on a
// fresh free port if the old one is taken.
func (s *Server) Restart(ctx context.Context) error {
	return onFreePort(ctx, &s.Port, s.launch)
}

func (s *Server) args() []string {
	o := s.opts
	a := []string{
		"--no-defaults",
		"--datadir=" + s.DataDir(),
		"--socket=" + s.Socket,
		"--port=" + strconv.Itoa(s.Port),
		"--bind-address=127.0.0.1",
		"--pid-file=" + filepath.Join(s.Dir, "mariadbd.pid"),
		"--log-error=" + filepath.Join(s.Dir, "error.log"),
		"--tmpdir=" + s.Dir,
		"--user=root",
		"--skip-name-resolve",
		"--max-connections=1000",
		"--innodb-buffer-pool-size=256M",
		"--innodb-log-file-size=256M",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
		"--server-id=" + strconv.FormatUint(uint64(o.ServerID), 10),
		"--gtid-domain-id=" + strconv.FormatUint(uint64(o.GTIDDomain), 10),
		"--skip-slave-start",
	}
	if o.Binlog {
		format := o.BinlogFormat
		if format == "" {
			format = "ROW"
		}
		a = append(a, "--log-bin="+filepath.Join(s.BinlogDir(), "binlog"), "--binlog-format="+format)
		if o.LogSlaveUpdates {
			a = append(a, "--log-slave-updates")
		}
		if o.BinlogRowMetadata != "" {
			a = append(a, "--binlog-row-metadata="+o.BinlogRowMetadata)
		}
		if o.BinlogRowImage != "" {
			a = append(a, "--binlog-row-image="+o.BinlogRowImage)
		}
		if o.SyncBinlog >= 0 {
			a = append(a, "--sync-binlog="+strconv.Itoa(o.SyncBinlog))
		}
		a = append(a, "--binlog-commit-wait-count="+strconv.Itoa(o.CommitWaitCount),
			"--binlog-commit-wait-usec="+strconv.Itoa(o.CommitWaitUsec))
	} else {
		a = append(a, "--skip-log-bin")
	}
	if o.SSLCert != "" {
		a = append(a, "--ssl-ca="+o.SSLCA, "--ssl-cert="+o.SSLCert, "--ssl-key="+o.SSLKey)
	}
	if o.RequireSecureTransport {
		a = append(a, "--require-secure-transport=ON")
	}
	if o.FlushLogAtTrxCommit >= 0 {
		a = append(a, "--innodb-flush-log-at-trx-commit="+strconv.Itoa(o.FlushLogAtTrxCommit))
	}
	if s.galera != nil {
		a = append(a, s.galeraArgs()...)
	}
	return append(a, o.Flags...)
}

func (s *Server) launch(ctx context.Context) error {
	cmd := exec.Command(mariadbd(), s.args()...)
	if s.galera != nil {
		bin, err := s.binDir()
		if err != nil {
			return err
		}
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return s.start(ctx, "mariadbd", cmd, func(ctx context.Context) error {
		db, err := s.Open("")
		if err != nil {
			return err
		}
		defer db.Close()
		return db.PingContext(ctx)
	}, s.logTail)
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "error.log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) <= 8 {
		return strings.Join(lines, "\n")
	}
	// The errors before the tail: a Galera node's last lines are its
	// shutdown, and the cause (a failed state transfer) came before.
	var errs []string
	for _, l := range lines[:len(lines)-8] {
		if strings.Contains(l, "[ERROR]") || strings.HasPrefix(l, "rsync") {
			errs = append(errs, l)
		}
	}
	if len(errs) > 8 {
		errs = errs[:8]
	}
	return strings.Join(append(errs, lines[len(lines)-8:]...), "\n")
}

// Stop shuts the server down cleanly (SIGTERM, then SIGKILL after 60s).
func (s *Server) Stop() { s.stop(syscall.SIGTERM) }

// Close stops the server and removes its directory, unless
// PREPL_SANDBOX_KEEP is set (to read a failed test's logs).
func (s *Server) Close() {
	s.Kill()
	if os.Getenv("PREPL_SANDBOX_KEEP") == "" {
		os.RemoveAll(s.Dir)
	}
}

// CopyDataDir copies the (stopped) server's data directory to dst, to be
// started again with Options.FromDataDir.
func (s *Server) CopyDataDir(dst string) error {
	if s.Running() {
		return errors.New("sandbox: stop the server before copying its data directory")
	}
	return copyDir(s.DataDir(), dst)
}

// BinlogFiles lists the instance's binlog files in order.
func (s *Server) BinlogFiles() ([]string, error) {
	m, err := filepath.Glob(filepath.Join(s.BinlogDir(), "binlog.[0-9]*"))
	return m, err
}

func mariadbd() string {
	if p := os.Getenv("PREPL_MARIADBD"); p != "" {
		return p
	}
	for _, p := range []string{"mariadbd", "/usr/sbin/mariadbd"} {
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	return "mariadbd"
}

var (
	templateOnce sync.Once
	templateDir  string
	templateErr  error
)

// template creates a fresh data directory once per process.
func template(ctx context.Context) (string, error) {
	templateOnce.Do(func() { templateDir, templateErr = sharedTemplate(ctx) })
	return templateDir, templateErr
}

// sharedTemplate returns a bootstrapped data directory shared by every
// process on the machine for one server binary (a test binary per package
// used to leave one of ~100 MB each behind): TMPDIR/prepl-sb-template-KEY,
// built privately and renamed into place; a process that loses the race
// uses the winner's.
func sharedTemplate(ctx context.Context) (string, error) {
	installDB, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		return "", ErrNoServer
	}
	bin, err := exec.LookPath(mariadbd())
	if err != nil {
		return "", ErrNoServer
	}
	return buildShared("prepl-sb-template-", []string{bin, installDB}, func(build, dir string) error {
		// A private tmpdir: bootstraps of parallel test binaries clash in /tmp.
		args := []string{"--no-defaults", "--datadir=" + dir, "--tmpdir=" + build, "--user=root",
			"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"}
		var out []byte
		for attempt := 0; attempt < 2; attempt++ {
			os.RemoveAll(dir)
			if err = os.MkdirAll(dir, 0o755); err != nil {
				break
			}
			if out, err = exec.CommandContext(ctx, installDB, args...).CombinedOutput(); err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("sandbox: mariadb-install-db: %v: %s", err, out)
		}
		return nil
	})
}

// buildShared returns TMPDIR/PREFIX-KEY/data, KEY naming the binaries
// (path, size, modification time) that make it: built once per machine by
// bootstrap(build, build/data) in a private directory renamed into place, so
// that test processes share it instead of each leaving its own behind; a
// process that loses the race uses the winner's.
func buildShared(prefix string, bins []string, bootstrap func(build, data string) error) (string, error) {
	h := sha256.New()
	for _, b := range bins {
		fi, err := os.Stat(b)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s|%d|%d|", b, fi.Size(), fi.ModTime().UnixNano())
	}
	final := filepath.Join(os.TempDir(), fmt.Sprintf("%s%x", prefix, h.Sum(nil)[:8]))
	data := filepath.Join(final, "data")
	if _, err := os.Stat(filepath.Join(final, "ready")); err == nil {
		return data, nil
	}
	build, err := os.MkdirTemp("", prefix+"build-")
	if err != nil {
		return "", err
	}
	err = bootstrap(build, filepath.Join(build, "data"))
	if err == nil {
		err = os.WriteFile(filepath.Join(build, "ready"), nil, 0o644)
	}
	if err != nil {
		os.RemoveAll(build)
		return "", err
	}
	if err := os.Rename(build, final); err != nil {
		os.RemoveAll(build)
		if _, serr := os.Stat(filepath.Join(final, "ready")); serr == nil {
			return data, nil // another process was first
		}
		return "", fmt.Errorf("sandbox: template: %w", err)
	}
	return data, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("sandbox: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func copyDir(src, dst string) error {
	out, err := exec.Command("cp", "-a", src, dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp -a %s %s: %v: %s", src, dst, err, out)
	}
	return nil
}

// onFreePort runs launch on *port (a free one when 0), and again up to
// twice on a fresh free port when the port was taken meanwhile.
func onFreePort(ctx context.Context, port *int, launch func(context.Context) error) error {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if *port == 0 || attempt > 0 {
			p, err := freePort()
			if err != nil {
				return err
			}
			*port = p
		}
		if lastErr = launch(ctx); lastErr == nil {
			return nil
		}
		if !strings.Contains(lastErr.Error(), "already in use") {
			return lastErr
		}
	}
	return lastErr
}
