package sandbox

// Throwaway PostgreSQL instances, the target side of the PostgreSQL tests.
// PostgreSQL refuses to run as root: when the test runs as root, initdb and
// postgres run with the credentials of the `postgres` user (set on the
// child process, so a SIGKILL reaches the server itself, not a runuser or
// pg_ctl in between) and the instance's directory is owned by it.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNoPostgres is returned when PostgreSQL's server binaries are not installed.
var ErrNoPostgres = errors.New("postgres and initdb not found: install them with `apt-get install -y postgresql` (or run `make deps`)")

// PGServer is a running (or stopped) PostgreSQL sandbox. Its superuser is
// `postgres`, trusted on 127.0.0.1 without a password.
type PGServer struct {
	Dir   string // holds data/ and the log
	Port  int
	Flags []string // extra server settings, "-c", "name=value" pairs
	process
}

// DataDir is the instance's data directory.
func (s *PGServer) DataDir() string { return filepath.Join(s.Dir, "data") }

// Addr is host:port for TCP clients.
func (s *PGServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// URL is the connection URL of database db as the superuser.
func (s *PGServer) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: s.Addr(), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// StartPostgres creates and starts an instance; flags are extra server
// settings ("-c", "name=value").
func StartPostgres(ctx context.Context, flags ...string) (*PGServer, error) {
	tmpl, err := pgTemplate(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "prepl-pg-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s := &PGServer{Dir: dir, Flags: flags}
	if err := copyDir(tmpl, s.DataDir()); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: copy data dir: %w", err)
	}
	if err := chownPostgres(dir); err != nil {
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
func (s *PGServer) Restart(ctx context.Context) error {
	return onFreePort(ctx, &s.Port, s.launch)
}

func (s *PGServer) launch(ctx context.Context) error {
	// After a Kill, the killed backends may still hold the old shared
	// memory for a moment: start again until they are gone.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.launchOnce(ctx)
		if err == nil || !strings.Contains(err.Error(), "shared memory block") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *PGServer) launchOnce(ctx context.Context) error {
	bin, err := pgBin("postgres")
	if err != nil {
		return err
	}
	logPath := filepath.Join(s.Dir, "postgres.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	args := append([]string{"-D", s.DataDir(), "-p", strconv.Itoa(s.Port), "-k", s.Dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200",
		// A sandbox dies with its test: only a crash of the process is
		// simulated (SIGKILL), which fsync does not change.
		"-c", "fsync=off", "-c", "full_page_writes=off"}, s.Flags...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: Kill takes the backends down with the postmaster.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: pgCredential(), Setpgid: true}
	s.group = true
	err = s.start(ctx, "postgres", cmd, s.ping, func() string { return tail(logPath) })
	logf.Close()
	return err
}

func (s *PGServer) ping(ctx context.Context) error {
	bin, err := pgBin("pg_isready")
	if err != nil {
		return err
	}
	return exec.CommandContext(ctx, bin, "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-U", "postgres").Run()
}

// Stop shuts the server down with a fast shutdown (SIGINT), then SIGKILL after 60s.
// Kill's SIGKILL goes to the whole process group: the backends exit with
// the postmaster; Restart waits for the old shared memory to be released.
func (s *PGServer) Stop() { s.stop(syscall.SIGINT) }

// Close stops the server and removes its directory.
func (s *PGServer) Close() {
	s.Stop()
	os.RemoveAll(s.Dir)
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}

// pgBinDir finds PostgreSQL's server binaries: PREPL_PG_BIN, the newest
// /usr/lib/postgresql/N/bin (Debian keeps them off PATH), or PATH.
func pgBin(name string) (string, error) {
	if d := os.Getenv("PREPL_PG_BIN"); d != "" {
		return filepath.Join(d, name), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		p := filepath.Join(dirs[i], name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", ErrNoPostgres
}

// pgCredential is the postgres user's when running as root, else nil.
func pgCredential() *syscall.Credential {
	if os.Getuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil // initdb will refuse root and say so
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

func chownPostgres(dir string) error {
	c := pgCredential()
	if c == nil {
		return nil
	}
	if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", c.Uid, c.Gid), dir).CombinedOutput(); err != nil {
		return fmt.Errorf("sandbox: chown %s to postgres: %v: %s", dir, err, out)
	}
	return nil
}

var (
	pgTemplateOnce sync.Once
	pgTemplateDir  string
	pgTemplateErr  error
)

// pgTemplate runs initdb once per machine and initdb binary (buildShared);
// instances copy its result.
func pgTemplate(ctx context.Context) (string, error) {
	pgTemplateOnce.Do(func() {
		initdb, err := pgBin("initdb")
		if err != nil {
			pgTemplateErr = err
			return
		}
		if _, err := os.Stat(initdb); err != nil {
			pgTemplateErr = ErrNoPostgres
			return
		}
		pgTemplateDir, pgTemplateErr = buildShared("prepl-pg-template-", []string{initdb}, func(build, data string) error {
			if err := chownPostgres(build); err != nil {
				return err
			}
			cmd := exec.CommandContext(ctx, initdb, "-D", data, "-U", "postgres", "--auth=trust",
				"--encoding=UTF8", "--locale=C", "--no-sync")
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pgCredential()}
			cmd.Dir = build
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("sandbox: initdb: %v: %s", err, out)
			}
			return nil
		})
	})
	return pgTemplateDir, pgTemplateErr
}
