package main

import (
	"bufio"
	"flag"
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

// endpointFlags are one endpoint's flags besides its URL.
type endpointFlags struct {
	role         string // source or target
	passwordFile string
	defaultsFile string
	sslMode      string
	sslCA        string
	sslCert      string
	sslKey       string
}

func (e *endpointFlags) register(fs *flag.FlagSet, role string) {
	e.role = role
	fs.StringVar(&e.passwordFile, role+"-password-file", "", "file whose first line is the "+role+"'s password; read again at every reconnect,\n"+
		"so a rotated secret is picked up (also: env PREPL_"+strings.ToUpper(role)+"_PASSWORD; MYSQL_PWD last)")
	fs.StringVar(&e.defaultsFile, role+"-defaults-file", "", "mysql option file for the "+role+" only; its [client] section wins over --defaults-file")
	fs.StringVar(&e.sslMode, role+"-ssl-mode", "", "TLS to the "+role+", as the mysql client's --ssl-mode: DISABLED, PREFERRED (default: TLS if the server\n"+
		"offers it), REQUIRED, VERIFY_CA, VERIFY_IDENTITY (default VERIFY_CA when --"+role+"-ssl-ca is given)")
	fs.StringVar(&e.sslCA, role+"-ssl-ca", "", "PEM file of the CA that signed the "+role+"'s certificate")
	fs.StringVar(&e.sslCert, role+"-ssl-cert", "", "PEM file of prepl's client certificate for the "+role)
	fs.StringVar(&e.sslKey, role+"-ssl-key", "", "PEM file of the private key of --"+role+"-ssl-cert")
}

// secretFlags are the flags about secrets every applying command shares.
type secretFlags struct {
	defaultsFile string
	strict       bool
	target       endpointFlags
	configPath   func() string // --config as given
	checked      bool          // the config file's mode was checked
}

func (s *secretFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.defaultsFile, "defaults-file", "", "mysql option file (my.cnf format) whose [client] section gives user, password, host, port, socket\n"+
		"and ssl-* to the source and the target where their URLs do not")
	fs.BoolVar(&s.strict, "strict-permissions", false, "refuse a config, option or password file holding a password that group or others may read\n"+
		"(default: a warning)")
	s.target.register(fs, "target")
	s.configPath = func() string {
		if f := fs.Lookup("config"); f != nil {
			return f.Value.String()
		}
		return ""
	}
}

// endpoint assembles an endpoint from its URL and ef (see the precedence
// above), checks the files holding its secret, and registers its password
// with package redact.
func (s *secretFlags) endpoint(raw string, ef *endpointFlags) (mysql.Endpoint, error) {
	if err := s.checkConfig(); err != nil {
		return mysql.Endpoint{}, err
	}
	flagName := "--" + ef.role
	e, err := mysql.ParseURLPartial(raw)
	if err != nil {
		return e, fmt.Errorf("%w: %s: %v", errUsage, flagName, err)
	}
	redact.Add(e.Password)
	var fromFlags mysql.Endpoint
	fromFlags.TLS = mysql.TLSOptions{CA: ef.sslCA, Cert: ef.sslCert, Key: ef.sslKey}
	if ef.sslMode != "" {
		if fromFlags.TLS.Mode, err = mysql.ParseSSLMode(ef.sslMode); err != nil {
			return e, fmt.Errorf("%w: --%s-ssl-mode: %v", errUsage, ef.role, err)
		}
	}
	if ef.passwordFile != "" {
		if err := s.checkFile(ef.passwordFile, "--"+ef.role+"-password-file", true); err != nil {
			return e, err
		}
		fromFlags.PasswordFile = ef.passwordFile
	} else if pw := os.Getenv("PREPL_" + strings.ToUpper(ef.role) + "_PASSWORD"); pw != "" {
		fromFlags.Password = pw
	}
	e = e.Merge(fromFlags)
	for _, f := range []struct{ path, flag string }{{ef.defaultsFile, "--" + ef.role + "-defaults-file"}, {s.defaultsFile, "--defaults-file"}} {
		if f.path == "" {
			continue
		}
		o, err := readOptionFile(f.path)
		if err != nil {
			return e, fmt.Errorf("%w: %s: %v", errUsage, f.flag, err)
		}
		if err := s.checkFile(f.path, f.flag, o.Password != ""); err != nil {
			return e, err
		}
		e = e.Merge(o)
	}
	e = e.Merge(mysql.Endpoint{Password: os.Getenv("MYSQL_PWD")})
	if e, err = e.WithDefaults(); err != nil {
		return e, fmt.Errorf("%w: %s: %v", errUsage, flagName, err)
	}
	if _, err := e.Secret(); err != nil {
		return e, fmt.Errorf("%w: --%s-password-file: %v", errUsage, ef.role, err)
	}
	if _, _, err := e.TLSConfig(); err != nil {
		return e, fmt.Errorf("%w: %s: %v", errUsage, flagName, err)
	}
	return e, nil
}

// checkConfig checks, once, that a config file holding a password is not
// readable by group or others.
func (s *secretFlags) checkConfig() error {
	if s.checked || s.configPath == nil {
		return nil
	}
	s.checked = true
	path := s.configPath()
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
func (s *secretFlags) checkFile(path, flagName string, secret bool) error {
	if !secret {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", errUsage, flagName, err)
	}
	mode := st.Mode().Perm()
	if mode&0o077 == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s %s holds a password and is readable by %s (mode %04o): chmod 600 %s", flagName, path, readers(mode), mode, path)
	if s.strict {
		return fmt.Errorf("%w: %s (refused: --strict-permissions)", errUsage, msg)
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
