package main

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/prepl/prepl/sandbox"
)

const (
	srcPw = "SrcRepl-Pw-7731" // the source's replication user
	tgtPw = "TgtApply-Pw-4410"
)

// tlsServer starts a sandbox that only accepts TLS over TCP, with certs.
func tlsServer(t *testing.T, c sandbox.Certs, serverID uint32, binlog bool) *sandbox.Server {
	t.Helper()
	o := sandbox.Defaults()
	o.ServerID, o.Binlog = serverID, binlog
	o.SyncBinlog, o.FlushLogAtTrxCommit = 0, 2
	o.SSLCA, o.SSLCert, o.SSLKey, o.RequireSecureTransport = c.CA, c.ServerCert, c.ServerKey, true
	o.Flags = []string{"--performance-schema=ON"}
	return sandbox.MustStart(t, o)
}

// users makes the source's replication user and the target's apply user,
// each with a password; the target's must show a client certificate.
func users(t *testing.T, src, tgt *sandbox.Server) {
	t.Helper()
	if src != nil {
		sandbox.MustExec(t, sandbox.MustOpen(t, src, ""),
			"SET SESSION sql_log_bin=0",
			"CREATE USER repl@'%' IDENTIFIED BY '"+srcPw+"'",
			"GRANT REPLICATION SLAVE, REPLICATION CLIENT, BINLOG MONITOR, SELECT ON *.* TO repl@'%'")
	}
	sandbox.MustExec(t, sandbox.MustOpen(t, tgt, ""),
		"CREATE USER prepl@'%' IDENTIFIED BY '"+tgtPw+"' REQUIRE X509",
		"GRANT ALL ON *.* TO prepl@'%'")
}

func tlsURL(user string, s *sandbox.Server, q url.Values) string {
	return "mysql://" + user + "@" + s.Addr() + "?" + q.Encode()
}

// sessionCiphers is Ssl_cipher of every session of user on s, as the
// server sees them (performance_schema).
func sessionCiphers(t *testing.T, s *sandbox.Server, user string) []string {
	t.Helper()
	rows, err := sandbox.MustOpen(t, s, "").Query(`SELECT COALESCE(st.VARIABLE_VALUE, '')
		FROM performance_schema.threads th
		LEFT JOIN performance_schema.status_by_thread st ON st.THREAD_ID = th.THREAD_ID AND st.VARIABLE_NAME = 'Ssl_cipher'
		WHERE th.PROCESSLIST_USER = ?`, user)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func countRows(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		return -1
	}
	return n
}

// TestTLSVerifyIdentity replicates and replays between servers that
// accept only TLS (require_secure_transport=ON), with certificates made
// here, in ssl-mode VERIFY_IDENTITY and a client certificate on the target;
// the servers confirm prepl's sessions are encrypted; a wrong CA fails
// with an error that says so.
func TestTLSVerifyIdentity(t *testing.T) {
	certs, other := sandbox.MustMakeCerts(t), sandbox.MustMakeCerts(t)
	src, tgt := tlsServer(t, certs, 1, true), tlsServer(t, certs, 2, false)
	users(t, src, tgt)
	sdb := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, sdb, "CREATE DATABASE s", "CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO s.t VALUES (1,'a'),(2,'b')")

	srcQ := url.Values{"ssl-mode": {"VERIFY_IDENTITY"}, "ssl-ca": {certs.CA}}
	tgtQ := url.Values{"ssl-mode": {"VERIFY_IDENTITY"}, "ssl-ca": {certs.CA}, "ssl-cert": {certs.ClientCert}, "ssl-key": {certs.ClientKey}}
	t.Setenv("PREPL_SOURCE_PASSWORD", srcPw)
	t.Setenv("PREPL_TARGET_PASSWORD", tgtPw)

	// Plain is refused by the servers (MariaDB 10.11 answers "access
	// denied" to the same user and password that pass over TLS below): the
	// test would prove nothing otherwise.
	if code, out := prepl(t, "replicate", "--source", tlsURL("repl", src, url.Values{"ssl-mode": {"DISABLED"}}),
		"--target", tlsURL("prepl", tgt, tgtQ), "--stop-at-end", "--source-reconnect-timeout", "0"); code != 1 ||
		!strings.Contains(out, "Access denied for user 'repl'") {
		t.Fatalf("plain connection to a require_secure_transport source: exit %d, want 1 and the server's refusal:\n%s", code, out)
	}

	r := startPrepl(t, "replicate", "--source", tlsURL("repl", src, srcQ), "--target", tlsURL("prepl", tgt, tgtQ), "--workers", "2")
	tdb := sandbox.MustOpen(t, tgt, "")
	waitFor(t, "rows on the target", func() bool { return countRows(t, tdb, "SELECT COUNT(*) FROM s.t") == 2 })
	for _, c := range []struct {
		s    *sandbox.Server
		user string
	}{{src, "repl"}, {tgt, "prepl"}} {
		ciphers := sessionCiphers(t, c.s, c.user)
		if len(ciphers) == 0 {
			t.Fatalf("no session of %s on the server while prepl runs", c.user)
		}
		for _, ci := range ciphers {
			if ci == "" {
				t.Errorf("a session of %s is not encrypted (Ssl_cipher empty): %q", c.user, ciphers)
			}
		}
	}
	var start struct{ SourceTLS, TargetTLS string }
	for _, line := range strings.Split(r.output(), "\n") {
		var rec struct {
			Msg       string
			SourceTLS string `json:"source_tls"`
			TargetTLS string `json:"target_tls"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "replicate started" {
			start.SourceTLS, start.TargetTLS = rec.SourceTLS, rec.TargetTLS
		}
	}
	for _, s := range []string{start.SourceTLS, start.TargetTLS} {
		if !strings.HasPrefix(s, "TLS ") || !strings.Contains(s, "certificate verified (ssl-mode=VERIFY_IDENTITY)") {
			t.Errorf("start line says %q, want TLS, verified", s)
		}
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.output())
	}

	// replay over TLS, into a second target.
	tgt2 := tlsServer(t, certs, 3, false)
	users(t, nil, tgt2)
	if out := mustPrepl(t, append([]string{"replay", "--target", tlsURL("prepl", tgt2, tgtQ), "--progress", "0"}, binlogFiles(t, src)...)...); !strings.Contains(out, "applied") {
		t.Fatalf("replay: %s", out)
	}
	if n := countRows(t, sandbox.MustOpen(t, tgt2, ""), "SELECT COUNT(*) FROM s.t"); n != 2 {
		t.Fatalf("replay over TLS: %d rows, want 2", n)
	}

	// A CA that did not sign the server's certificate: refused, and said so.
	wrong := url.Values{"ssl-mode": {"VERIFY_IDENTITY"}, "ssl-ca": {other.CA}}
	code, out := prepl(t, "replicate", "--source", tlsURL("repl", src, wrong), "--target", tlsURL("prepl", tgt, tgtQ),
		"--stop-at-end", "--source-reconnect-timeout", "0")
	if code != 1 || !strings.Contains(out, "not signed by a CA in ssl-ca="+other.CA) {
		t.Errorf("source with the wrong CA: exit %d, want 1 naming the CA:\n%s", code, out)
	}
	wrongTgt := url.Values{"ssl-mode": {"VERIFY_CA"}, "ssl-ca": {other.CA}, "ssl-cert": {certs.ClientCert}, "ssl-key": {certs.ClientKey}}
	code, out = prepl(t, "status", "--target", tlsURL("prepl", tgt, wrongTgt))
	if code != statusCritical || !strings.Contains(out, "not signed by a CA in ssl-ca="+other.CA) {
		t.Errorf("target with the wrong CA: exit %d, want 2 (CRITICAL) naming the CA:\n%s", code, out)
	}
	// VERIFY_IDENTITY checks the name: the certificate names 127.0.0.1 and
	// localhost, not 127.0.0.2 (a relay there reaches the same server).
	byOtherName := "mysql://prepl@" + relay(t, "127.0.0.2:0", tgt.Addr()) + "?" + tgtQ.Encode()
	code, out = prepl(t, "status", "--target", byOtherName)
	if code != statusCritical || !strings.Contains(out, "does not name host") {
		t.Errorf("target by a name not in its certificate: exit %d, want 2 (CRITICAL):\n%s", code, out)
	}
}

// TestPreferredFallsBackToPlain: the default ssl-mode, PREFERRED, talks
// plain to a server without TLS, and says so in the start line;
// REQUIRED refuses it.
func TestPreferredFallsBackToPlain(t *testing.T) {
	src, tgt := source(t, nil), targetServer(t)
	sandbox.MustExec(t, sandbox.MustOpen(t, src, ""), "CREATE DATABASE p", "CREATE TABLE p.t (id INT PRIMARY KEY)", "INSERT INTO p.t VALUES (1)")
	code, out := prepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--stop-at-end", "--log-format", "json")
	if code != 0 || !strings.Contains(out, `"source_tls":"plain: the server offers no TLS (ssl-mode=PREFERRED)"`) ||
		!strings.Contains(out, `"target_tls":"plain: the server offers no TLS (ssl-mode=PREFERRED)"`) {
		t.Fatalf("exit %d, want 0 and plain connections named in the start line:\n%s", code, out)
	}
	code, out = prepl(t, "status", "--target", tgt.URL(), "--target-ssl-mode", "REQUIRED")
	if code != statusCritical || !strings.Contains(out, "does not offer TLS") {
		t.Fatalf("REQUIRED to a server without TLS: exit %d, want 2 (CRITICAL):\n%s", code, out)
	}
	code, out = prepl(t, "replicate", "--source", src.URL()+"?ssl-mode=REQUIRED", "--target", tgt.URL(), "--stop-at-end")
	if code != 1 || !strings.Contains(out, "does not offer TLS") {
		t.Fatalf("REQUIRED to a source without TLS: exit %d, want 1:\n%s", code, out)
	}
}

// writeSecretFile writes a file with mode 0600.
func writeSecretFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// relay forwards connections to listen on to upstream; it returns the
// address it listens on.
func relay(t *testing.T, listen, upstream string) string {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// plainUsers makes repl on src and prepl on tgt, with passwords.
func plainUsers(t *testing.T, src, tgt *sandbox.Server) {
	t.Helper()
	sandbox.MustExec(t, sandbox.MustOpen(t, src, ""), "SET SESSION sql_log_bin=0",
		"CREATE USER repl@'%' IDENTIFIED BY '"+srcPw+"'",
		"GRANT REPLICATION SLAVE, REPLICATION CLIENT, BINLOG MONITOR, SELECT ON *.* TO repl@'%'")
	sandbox.MustExec(t, sandbox.MustOpen(t, tgt, ""), "CREATE USER prepl@'%' IDENTIFIED BY '"+tgtPw+"'", "GRANT ALL ON *.* TO prepl@'%'")
}

// cmdline is what ps shows of a process: its arguments.
func cmdline(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// killSessions ends every session of user on s (the replication dump
// thread included), as a network cut or a DBA would.
func killSessions(t *testing.T, s *sandbox.Server, user string) int {
	t.Helper()
	db := sandbox.MustOpen(t, s, "")
	rows, err := db.Query("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?", user)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		db.Exec(fmt.Sprintf("KILL CONNECTION %d", id))
	}
	return len(ids)
}

// TestPasswordsFromEnvFileAndOptionFile runs replicate with the passwords
// from the environment, from password files, and from option files: each
// run applies a new row, and no password shows in the process's command
// line (ps) or its log. With password files, both passwords are changed
// and the sessions killed mid-run: prepl reconnects with the new ones.
func TestPasswordsFromEnvFileAndOptionFile(t *testing.T) {
	src, tgt := source(t, nil), targetServer(t)
	plainUsers(t, src, tgt)
	sdb, tdb := sandbox.MustOpen(t, src, ""), sandbox.MustOpen(t, tgt, "")
	sandbox.MustExec(t, sdb, "CREATE DATABASE pw", "CREATE TABLE pw.t (id INT PRIMARY KEY)")
	srcURL, tgtURL := "mysql://repl@"+src.Addr(), "mysql://prepl@"+tgt.Addr()
	const srcPw2, tgtPw2 = "SrcRotated-Pw-2291", "TgtRotated-Pw-8812"
	secrets := []string{srcPw, tgtPw, srcPw2, tgtPw2}
	row := 0
	run := func(name string, env []string, args []string, midRun func()) {
		t.Helper()
		for i := 0; i < len(env); i += 2 {
			t.Setenv(env[i], env[i+1])
		}
		row++
		sandbox.MustExec(t, sdb, fmt.Sprintf("INSERT INTO pw.t VALUES (%d)", row))
		r := startPrepl(t, append([]string{"replicate", "--source", srcURL, "--target", tgtURL, "--progress", "0"}, args...)...)
		want := row
		waitFor(t, name+": row applied", func() bool { return countRows(t, tdb, "SELECT COUNT(*) FROM pw.t") == want })
		ps := cmdline(t, r.cmd.Process.Pid)
		if midRun != nil {
			midRun()
			row++
			sandbox.MustExec(t, sdb, fmt.Sprintf("INSERT INTO pw.t VALUES (%d)", row))
			want = row
			waitFor(t, name+": row applied after the passwords changed", func() bool { return countRows(t, tdb, "SELECT COUNT(*) FROM pw.t") == want })
		}
		r.cmd.Process.Signal(syscall.SIGTERM)
		if code := r.wait(t); code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, code, r.output())
		}
		for _, s := range secrets {
			if strings.Contains(ps, s) || strings.Contains(r.output(), s) {
				t.Errorf("%s: password %q shows in ps (%s) or the log:\n%s", name, s, ps, r.output())
			}
		}
		for i := 0; i < len(env); i += 2 {
			os.Unsetenv(env[i])
		}
	}

	run("environment", []string{"PREPL_SOURCE_PASSWORD", srcPw, "PREPL_TARGET_PASSWORD", tgtPw}, nil, nil)

	srcFile, tgtFile := writeSecretFile(t, "source.pw", srcPw+"\n"), writeSecretFile(t, "target.pw", tgtPw+"\n")
	run("password files", nil, []string{"--source-password-file", srcFile, "--target-password-file", tgtFile}, func() {
		sandbox.MustExec(t, sdb, "SET SESSION sql_log_bin=0", "ALTER USER repl@'%' IDENTIFIED BY '"+srcPw2+"'", "SET SESSION sql_log_bin=1")
		sandbox.MustExec(t, tdb, "ALTER USER prepl@'%' IDENTIFIED BY '"+tgtPw2+"'")
		os.WriteFile(srcFile, []byte(srcPw2+"\n"), 0o600)
		os.WriteFile(tgtFile, []byte(tgtPw2+"\n"), 0o600)
		if killSessions(t, src, "repl") == 0 || killSessions(t, tgt, "prepl") == 0 {
			t.Fatal("no prepl session to kill")
		}
	})

	srcCnf := writeSecretFile(t, "source.cnf", "[mysqld]\nport=1\n\n[client]\nuser = repl\npassword = \""+srcPw2+"\"\n")
	tgtCnf := writeSecretFile(t, "target.cnf", "# prepl's target\n[client]\npassword='"+tgtPw2+"'\nhost=127.0.0.1\n")
	run("option files", nil, []string{"--source-defaults-file", srcCnf, "--target-defaults-file", tgtCnf}, nil)

	// MYSQL_PWD is the last resort, after --defaults-file.
	t.Setenv("MYSQL_PWD", tgtPw2)
	if out := mustPrepl(t, "status", "--target", tgtURL); strings.Contains(out, tgtPw2) {
		t.Errorf("MYSQL_PWD: %s", out)
	}
	common := writeSecretFile(t, "common.cnf", "[client]\npassword="+tgtPw2+"\n")
	t.Setenv("MYSQL_PWD", "not-the-password")
	mustPrepl(t, "status", "--target", tgtURL, "--defaults-file", common)
}

func httpGet(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// positionTable is every stored column of prepl.position, as text.
func positionTable(t *testing.T, tgt *sandbox.Server) string {
	t.Helper()
	rows, err := sandbox.MustOpen(t, tgt, "").Query("SELECT * FROM prepl.position")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			b.WriteString(v.String + " ")
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		t.Fatal("prepl.position is empty")
	}
	return b.String()
}

// TestNoSecretInAnyOutput runs the paths where a password could leak: bad
// URLs, a wrong password, an unreachable host, and account DDL carrying
// passwords (applied, and skipped by the table filter), and looks for
// every password in everything prepl wrote: stdout, stderr in text and
// JSON, /status, /metrics and the position table.
func TestNoSecretInAnyOutput(t *testing.T) {
	src, tgt := source(t, nil), targetServer(t)
	plainUsers(t, src, tgt)
	sdb, tdb := sandbox.MustOpen(t, src, ""), sandbox.MustOpen(t, tgt, "")
	sandbox.MustExec(t, tdb, "GRANT ALL ON *.* TO prepl@'%' WITH GRANT OPTION")
	ddlSecrets := []string{"AppPlainPw1", "GrantPw-55", "AlterPw-66", "SetPw-77", "ViaPw-88", "SkippedPw-99"}
	c, err := sdb.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE DATABASE s", "CREATE DATABASE other", "USE s", "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)",
		"CREATE USER app@'%' IDENTIFIED BY 'AppPlainPw1'",
		"GRANT SELECT ON s.* TO app2@'%' IDENTIFIED BY 'GrantPw-55'",
		"ALTER USER app@'%' IDENTIFIED BY 'AlterPw-66'",
		"SET PASSWORD FOR app@'%' = PASSWORD('SetPw-77')",
		"CREATE USER ed@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('ViaPw-88')",
		"USE other", "CREATE USER skip@'%' IDENTIFIED BY 'SkippedPw-99'",
		"USE s", "INSERT INTO t VALUES (2)",
	} {
		if _, err := c.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c.Close()
	t.Setenv("PREPL_SOURCE_PASSWORD", srcPw)
	t.Setenv("PREPL_TARGET_PASSWORD", tgtPw)
	srcURL, tgtURL := "mysql://repl@"+src.Addr(), "mysql://prepl@"+tgt.Addr()

	var outputs []string
	r := startPrepl(t, "replicate", "--source", srcURL, "--target", tgtURL, "--include", "s.*", "--progress", "100ms")
	waitFor(t, "the DDL applied", func() bool { return countRows(t, tdb, "SELECT COUNT(*) FROM s.t") == 2 })
	if countRows(t, tdb, "SELECT COUNT(*) FROM mysql.user WHERE user IN ('app', 'app2', 'ed')") != 3 ||
		countRows(t, tdb, "SELECT COUNT(*) FROM mysql.user WHERE user = 'skip'") != 0 {
		t.Fatalf("account DDL not applied as the source ran it, or the filter let the other schema's through\n%s", r.output())
	}
	outputs = append(outputs, httpGet(t, "http://"+r.addr+"/status"), httpGet(t, "http://"+r.addr+"/metrics"), positionTable(t, tgt))
	r.cmd.Process.Signal(syscall.SIGTERM)
	r.wait(t)
	log := r.output()
	for _, want := range []string{"DDL applied", "IDENTIFIED BY '***'", "PASSWORD('***')", "DDL skipped by the table filter"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	outputs = append(outputs, log)

	failing := [][]string{
		{"replicate", "--source", "mysql://repl:BadUrlPw-1@127.0.0.1:99999", "--target", tgtURL},
		{"replicate", "--source", srcURL, "--target", "mysql://prepl:BadUrlPw-2@[::1"},
		{"replicate", "--source", "mysql://repl:BadUrlPw-3@db1:3306?tls=true", "--target", tgtURL},
		{"status", "--target", "mysql://prepl:BadUrl%zzPw-4@127.0.0.1"},
		{"status", "--target", "mysql://prepl:WrongPw-5@" + tgt.Addr()},
		{"replicate", "--source", "mysql://repl:UnreachPw-6@127.0.0.1:1", "--target", tgtURL, "--source-reconnect-timeout", "0", "--stop-at-end"},
		{"replicate", "--source", "mysql://repl:" + srcPw + "x@" + src.Addr(), "--target", tgtURL, "--stop-at-end"},
		{"replay", "--target", "mysql://prepl:WrongPw-8@" + tgt.Addr(), "--reconnect-timeout", "0", fixtureDir + "mysql-bin.checksum-none"},
	}
	secrets := append([]string{srcPw, tgtPw, "BadUrlPw-1", "BadUrlPw-2", "BadUrlPw-3", "BadUrl%zzPw-4", "WrongPw-5", "UnreachPw-6", srcPw + "x", "WrongPw-8"}, ddlSecrets...)
	for _, args := range failing {
		for _, format := range []string{"text", "json"} {
			code, out := prepl(t, append(args, "--log-format", format)...)
			if code == 0 {
				t.Errorf("prepl %s: exit 0, want a failure:\n%s", strings.Join(args, " "), out)
			}
			outputs = append(outputs, out)
		}
	}
	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("password %q written:\n%s", s, out)
			}
		}
	}
	// The failures are still explained.
	all := strings.Join(outputs, "\n")
	for _, want := range []string{`port "99999"`, `unknown parameter "tls"`, "Access denied for user 'prepl'", "connection refused", "Access denied for user 'repl'"} {
		if !strings.Contains(all, want) {
			t.Errorf("no error says %q", want)
		}
	}
}

// TestMissingPrivilegesNamed: a target user without PROCESS and without
// CONNECTION ADMIN, in an optimistic mode, and a source user without
// SELECT: prepl names each missing privilege and what needs it at start.
func TestMissingPrivilegesNamed(t *testing.T) {
	src, tgt := source(t, nil), targetServer(t)
	sandbox.MustExec(t, sandbox.MustOpen(t, src, ""), "SET SESSION sql_log_bin=0",
		"CREATE USER repl@'%' IDENTIFIED BY '"+srcPw+"'", "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO repl@'%'",
		"SET SESSION sql_log_bin=1", "CREATE DATABASE s", "CREATE TABLE s.t (id INT PRIMARY KEY)", "INSERT INTO s.t VALUES (1)")
	sandbox.MustExec(t, sandbox.MustOpen(t, tgt, ""), "CREATE USER lim@'%' IDENTIFIED BY '"+tgtPw+"'",
		"GRANT ALL ON prepl.* TO lim@'%'", "GRANT ALL ON s.* TO lim@'%'")
	t.Setenv("PREPL_SOURCE_PASSWORD", srcPw)
	t.Setenv("PREPL_TARGET_PASSWORD", tgtPw)
	// The run itself stops at the first DDL, for want of PROCESS; the
	// warnings came before anything was applied.
	_, out := prepl(t, "replicate", "--source", "mysql://repl@"+src.Addr(), "--target", "mysql://lim@"+tgt.Addr(),
		"--mode", "optimistic", "--stop-at-end", "--log-format", "json")
	if i, j := strings.Index(out, `"privilege":"PROCESS"`), strings.Index(out, `"replicate started"`); i < 0 || j < 0 || i > j {
		t.Errorf("the PROCESS warning is not before the start line:\n%s", out)
	}
	for _, want := range []string{`"privilege":"PROCESS"`, `"privilege":"CONNECTION ADMIN"`, `"source user lacks a privilege prepl needs","privilege":"SELECT"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no warning with %s:\n%s", want, out)
		}
	}
	for _, notWanted := range []string{`"privilege":"CREATE"`, `"privilege":"REPLICATION SLAVE"`, `"privilege":"REPLICATION CLIENT"`, `"privilege":"BINLOG REPLAY"`} {
		if strings.Contains(out, notWanted) {
			t.Errorf("a warning about a privilege held or not needed, %s:\n%s", notWanted, out)
		}
	}
}

// TestWebConfigOnMetrics: with --web-config, /status is served over HTTPS
// to a user with the password of the file's bcrypt hash only; a broken
// file is a usage error.
func TestWebConfigOnMetrics(t *testing.T) {
	src, tgt := source(t, nil), targetServer(t)
	certs := sandbox.MustMakeCerts(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("ScrapePw-61"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := writeSecretFile(t, "web.yml", "tls_server_config:\n  cert_file: "+certs.ServerCert+"\n  key_file: "+certs.ServerKey+
		"\nbasic_auth_users:\n  prom: "+string(hash)+"\n")
	r := startPrepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--web-config", web)
	if !strings.HasPrefix(r.addr, "https://") {
		t.Fatalf("status served at %q, want https://\n%s", r.addr, r.output())
	}
	pem, _ := os.ReadFile(certs.CA)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	for _, c := range []struct {
		user, pw string
		code     int
	}{{"prom", "ScrapePw-61", 200}, {"", "", 401}, {"prom", "nope", 401}} {
		req, _ := http.NewRequest(http.MethodGet, r.addr+"/status", nil)
		if c.user != "" {
			req.SetBasicAuth(c.user, c.pw)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || c.code == 200 && !strings.Contains(string(body), `"command": "replicate"`) {
			t.Errorf("GET /status as %q: %d %s, want %d", c.user, resp.StatusCode, body, c.code)
		}
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	r.wait(t)

	broken := writeSecretFile(t, "broken.yml", "tls_server_config:\n  cert_file: /nonexistent.pem\n")
	code, out := prepl(t, "replicate", "--source", src.URL(), "--target", tgt.URL(), "--stop-at-end",
		"--metrics-addr", "127.0.0.1:0", "--web-config", broken)
	if code != 2 || !strings.Contains(out, "--web-config "+broken) {
		t.Errorf("broken --web-config: exit %d, want 2 naming the file:\n%s", code, out)
	}
}
