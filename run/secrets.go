package run

import (
	"bufio"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/redact"
)

// How an endpoint's password is found, first match wins:
//
//  1. the password in its URL (--source/--target, command line or config file)
//  2. --ROLE-password-file FILE (its first line; read again at every reconnect)
//  3. the environment variable PREPL_ROLE_PASSWORD
//  4. password in the [client] section of --ROLE-defaults-file, then of --defaults-file
//  5. the environment variable MYSQL_PWD, as the mysql client reads it
//
// The other connection settings (user, host, port, socket, ssl-*) come
// from the URL, then --ROLE-ssl-* flags (or config keys), then the option
// files' [client] section, then the defaults (root@127.0.0.1:3306,
// ssl-mode PREFERRED, or VERIFY_CA when ssl-ca is given).

// EndpointSecrets are one endpoint's settings besides its URL (the
// --ROLE-* flags).
type EndpointSecrets struct {
	Role         string // source or target
	PasswordFile string
	DefaultsFile string
	SSLMode      string
	SSLCA        string
	SSLCert      string
	SSLKey       string
}

// Secrets are the settings about secrets every applying command shares.
type Secrets struct {
	DefaultsFile string
	// Strict refuses, rather than warns about, a file holding a password
	// that group or others may read.
	Strict     bool
	Target     EndpointSecrets
	ConfigPath func() string // --config as given
	checked    bool          // the config file's mode was checked
}

// Endpoint assembles an endpoint from its URL and ef (see the precedence
// above), checks the files holding its secret, and registers its password
// with package redact.
func (s *Secrets) Endpoint(raw string, ef *EndpointSecrets) (mysql.Endpoint, error) {
	if err := s.checkConfig(); err != nil {
		return mysql.Endpoint{}, err
	}
	flagName := "--" + ef.Role
	e, err := mysql.ParseURLPartial(raw)
	if err != nil {
		return e, fmt.Errorf("%w: %s: %v", ErrUsage, flagName, err)
	}
	redact.Add(e.Password)
	var fromFlags mysql.Endpoint
	fromFlags.TLS = mysql.TLSOptions{CA: ef.SSLCA, Cert: ef.SSLCert, Key: ef.SSLKey}
	if ef.SSLMode != "" {
		if fromFlags.TLS.Mode, err = mysql.ParseSSLMode(ef.SSLMode); err != nil {
			return e, fmt.Errorf("%w: --%s-ssl-mode: %v", ErrUsage, ef.Role, err)
		}
	}
	if ef.PasswordFile != "" {
		if err := s.checkFile(ef.PasswordFile, "--"+ef.Role+"-password-file", true); err != nil {
			return e, err
		}
		fromFlags.PasswordFile = ef.PasswordFile
	} else if pw := os.Getenv("PREPL_" + strings.ToUpper(ef.Role) + "_PASSWORD"); pw != "" {
		fromFlags.Password = pw
	}
	e = e.Merge(fromFlags)
	for _, f := range []struct{ path, flag string }{{ef.DefaultsFile, "--" + ef.Role + "-defaults-file"}, {s.DefaultsFile, "--defaults-file"}} {
		if f.path == "" {
			continue
		}
		o, err := readOptionFile(f.path)
		if err != nil {
			return e, fmt.Errorf("%w: %s: %v", ErrUsage, f.flag, err)
		}
		if err := s.checkFile(f.path, f.flag, o.Password != ""); err != nil {
			return e, err
		}
		e = e.Merge(o)
	}
	e = e.Merge(mysql.Endpoint{Password: os.Getenv("MYSQL_PWD")})
	if e, err = e.WithDefaults(); err != nil {
		return e, fmt.Errorf("%w: %s: %v", ErrUsage, flagName, err)
	}
	if _, err := e.Secret(); err != nil {
		return e, fmt.Errorf("%w: --%s-password-file: %v", ErrUsage, ef.Role, err)
	}
	if _, _, err := e.TLSConfig(); err != nil {
		return e, fmt.Errorf("%w: %s: %v", ErrUsage, flagName, err)
	}
	return e, nil
}

// checkConfig checks, once, that a config file holding a password is not
// readable by group or others.
func (s *Secrets) checkConfig() error {
	if s.checked || s.ConfigPath == nil {
		return nil
	}
	s.checked = true
	path := s.ConfigPath()
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil // parseFlags has read it; it reports its own errors
	}
	var doc map[string]any
	if toml.Unmarshal(data, &doc) != nil {
		return nil
	}
	return s.checkFile(path, "--config", holdsSecret(doc))
}

// holdsSecret tells whether a config document has a password: a URL with
// one, or a key that names one.
func holdsSecret(doc map[string]any) bool {
	for k, v := range doc {
		switch x := v.(type) {
		case map[string]any:
			if holdsSecret(x) {
				return true
			}
		case string:
			lk := strings.ToLower(k)
			if strings.Contains(lk, "password") && !strings.HasSuffix(lk, "-file") {
				return true
			}
			if e, err := mysql.ParseURLPartial(x); err == nil && e.Password != "" {
				return true
			}
		}
	}
	return false
}

// checkFile warns about (or with --strict-permissions refuses) a file
// holding a secret that group or others may read.
func (s *Secrets) checkFile(path, flagName string, secret bool) error {
	if !secret {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUsage, flagName, err)
	}
	mode := st.Mode().Perm()
	if mode&0o077 == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s %s holds a password and is readable by %s (mode %04o): chmod 600 %s", flagName, path, readers(mode), mode, path)
	if s.Strict {
		return fmt.Errorf("%w: %s (refused: --strict-permissions)", ErrUsage, msg)
	}
	slog.Default().Warn(msg, "file", path, "mode", fmt.Sprintf("%04o", mode))
	return nil
}

func readers(m fs.FileMode) string {
	switch {
	case m&0o044 == 0o044:
		return "group and others"
	case m&0o004 != 0:
		return "others"
	case m&0o040 != 0:
		return "group"
	}
	return "group or others (writable)"
}

// readOptionFile reads the [client] and [client-mariadb] sections of a
// mysql option file: user, password, host, port, socket, ssl-mode,
// ssl-ca, ssl-cert, ssl-key. Other keys and sections are ignored, as the
// mysql client ignores options meant for other programs.
func readOptionFile(path string) (mysql.Endpoint, error) {
	var e mysql.Endpoint
	f, err := os.Open(path)
	if err != nil {
		return e, err
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '!' {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.ToLower(strings.TrimSpace(line[1 : len(line)-1]))
			continue
		}
		if section != "client" && section != "client-mariadb" {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		k = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(k)), "_", "-")
		v = unquoteOption(strings.TrimSpace(v))
		switch k {
		case "user":
			e.User = v
		case "password":
			e.Password = v
			redact.Add(v)
		case "host":
			e.Host = v
		case "port":
			p, err := strconv.ParseUint(v, 10, 16)
			if err != nil {
				return e, fmt.Errorf("%s:%d: port %q", path, n, v)
			}
			e.Port = uint16(p)
		case "socket":
			e.Socket = v
		case "ssl-mode":
			m, err := mysql.ParseSSLMode(v)
			if err != nil {
				return e, fmt.Errorf("%s:%d: %v", path, n, err)
			}
			e.TLS.Mode = m
		case "ssl-ca":
			e.TLS.CA = v
		case "ssl-cert":
			e.TLS.Cert = v
		case "ssl-key":
			e.TLS.Key = v
		}
	}
	if err := sc.Err(); err != nil {
		return e, err
	}
	if e.Host != "" && e.Socket != "" && e.Host != "localhost" {
		e.Socket = "" // host wins over socket, as for the mysql client with a remote host
	}
	if e.Host == "localhost" && e.Socket != "" {
		e.Host = ""
	}
	return e, nil
}

// unquoteOption strips the quotes of an option value ("a b", 'x') and a
// trailing comment of an unquoted one.
func unquoteOption(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			switch c := v[i]; {
			case c == v[0]:
				return b.String()
			case c == '\\' && i+1 < len(v):
				i++
				switch v[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(v[i])
				}
			default:
				b.WriteByte(c)
			}
		}
		return b.String()
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v
}

// PGPassword is the PostgreSQL target's password from
// --target-password-file or PREPL_TARGET_PASSWORD ("" leaves it to the
// URL, PGPASSWORD or ~/.pgpass).
func (s *Secrets) PGPassword() (string, error) {
	if pf := s.Target.PasswordFile; pf != "" {
		b, err := os.ReadFile(pf)
		if err != nil {
			return "", fmt.Errorf("%w: --target-password-file: %v", ErrUsage, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	return os.Getenv("PREPL_TARGET_PASSWORD"), nil
}
