// Package mysql is prepl's MySQL/MariaDB target: the SQL dialect, the
// target's schema catalog, error classes and the position table.
package mysql

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/prepl/prepl/redact"
)

// Endpoint is a parsed mysql://USER:PASS@HOST:PORT[?OPTIONS] URL, or the
// same assembled from flags, a password file and an option file.
//
// Invariant: no method of Endpoint returns or prints the password except
// Secret; String, GoString and errors show the URL without it.
type Endpoint struct {
	User     string
	Password string
	// PasswordFile, when set, holds the password: it is read again at
	// every connect, so a rotated secret is picked up on reconnect. It
	// wins over Password.
	PasswordFile string
	Host         string
	Port         uint16
	Socket       string
	TLS          TLSOptions
}

// urlOptions are the query parameters a URL may carry, in the mysql
// client's vocabulary (ssl_mode is accepted for ssl-mode, and so on).
var urlOptions = []string{"socket", "ssl-mode", "ssl-ca", "ssl-cert", "ssl-key"}

// ParseURL parses a prepl connection URL and fills in what it leaves out
// (user root, host 127.0.0.1, port 3306, ssl-mode PREFERRED or VERIFY_CA
// with ssl-ca). An error never holds the password.
func ParseURL(raw string) (Endpoint, error) {
	e, err := ParseURLPartial(raw)
	if err != nil {
		return e, err
	}
	return e.WithDefaults()
}

// ParseURLPartial parses a URL without filling in defaults, so that what
// it leaves out can come from elsewhere (Merge) first.
func ParseURLPartial(raw string) (Endpoint, error) {
	shown := redact.URL(raw)
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole URL, password included: keep only
		// its reason.
		var why error = err
		if ue, ok := err.(*url.Error); ok {
			why = ue.Err
		}
		return Endpoint{}, fmt.Errorf("bad URL %s: %s", shown, redact.String(why.Error()))
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return Endpoint{}, fmt.Errorf("bad URL %s: scheme must be mysql:// (mysql://USER@HOST:PORT?ssl-mode=VERIFY_IDENTITY&ssl-ca=FILE)", shown)
	}
	e := Endpoint{User: u.User.Username(), Host: u.Hostname()}
	e.Password, _ = u.User.Password()
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return Endpoint{}, fmt.Errorf("bad URL %s: port %q", shown, p)
		}
		e.Port = uint16(n)
	}
	if e.Host != "" && net.ParseIP(e.Host) == nil && !hostname(e.Host) {
		return Endpoint{}, fmt.Errorf("bad URL %s: host %q is neither an IP address nor a host name", shown, e.Host)
	}
	for k, vs := range u.Query() {
		name := strings.ReplaceAll(strings.ToLower(k), "_", "-")
		v := vs[len(vs)-1]
		switch name {
		case "socket":
			e.Socket = v
		case "ssl-mode":
			m, err := ParseSSLMode(v)
			if err != nil {
				return Endpoint{}, fmt.Errorf("bad URL %s: %v", shown, err)
			}
			e.TLS.Mode = m
		case "ssl-ca":
			e.TLS.CA = v
		case "ssl-cert":
			e.TLS.Cert = v
		case "ssl-key":
			e.TLS.Key = v
		default:
			return Endpoint{}, fmt.Errorf("bad URL %s: unknown parameter %q (accepted: %s)", shown, k, strings.Join(urlOptions, ", "))
		}
	}
	return e, nil
}

// Merge fills the fields e leaves empty from o (an option file's [client]
// section, or flags).
func (e Endpoint) Merge(o Endpoint) Endpoint {
	if e.User == "" {
		e.User = o.User
	}
	if e.Password == "" && e.PasswordFile == "" {
		e.Password, e.PasswordFile = o.Password, o.PasswordFile
	}
	if e.Host == "" && e.Socket == "" {
		e.Host, e.Socket = o.Host, o.Socket
	}
	if e.Port == 0 {
		e.Port = o.Port
	}
	if e.TLS.Mode == "" {
		e.TLS.Mode = o.TLS.Mode
	}
	if e.TLS.CA == "" {
		e.TLS.CA = o.TLS.CA
	}
	if e.TLS.Cert == "" && e.TLS.Key == "" {
		e.TLS.Cert, e.TLS.Key = o.TLS.Cert, o.TLS.Key
	}
	return e
}

// WithDefaults fills in what is still missing and checks the TLS options.
func (e Endpoint) WithDefaults() (Endpoint, error) {
	if e.User == "" {
		e.User = "root"
	}
	if e.Port == 0 {
		e.Port = 3306
	}
	if e.Host == "" && e.Socket == "" {
		e.Host = "127.0.0.1"
	}
	if e.TLS.Mode == "" {
		// As the mysql client: a CA given asks for its verification.
		e.TLS.Mode = Preferred
		if e.TLS.CA != "" {
			e.TLS.Mode = VerifyCA
		}
	}
	if (e.TLS.Cert == "") != (e.TLS.Key == "") {
		return e, fmt.Errorf("%s: ssl-cert and ssl-key go together (a client certificate and its key)", e)
	}
	if e.TLS.Mode == Disabled && (e.TLS.CA != "" || e.TLS.Cert != "") {
		return e, fmt.Errorf("%s: ssl-mode=DISABLED with ssl-ca/ssl-cert: say which one you mean", e)
	}
	return e, nil
}

// Secret returns the password: read from PasswordFile (its first line)
// when set, Password otherwise. The password read is registered with
// package redact, so it never shows in prepl's output.
func (e Endpoint) Secret() (string, error) {
	if e.PasswordFile == "" {
		redact.Add(e.Password)
		return e.Password, nil
	}
	pw, err := ReadPasswordFile(e.PasswordFile)
	if err != nil {
		return "", err
	}
	return pw, nil
}

// ReadPasswordFile reads a password file: its first line, without the
// line end. The password is registered with package redact.
func ReadPasswordFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("password file: %w", err)
	}
	pw, _, _ := strings.Cut(string(data), "\n")
	pw = strings.TrimSuffix(pw, "\r")
	if pw == "" {
		return "", fmt.Errorf("password file %s is empty", path)
	}
	redact.Add(pw)
	return pw, nil
}

// hostname reports whether h is a DNS host name (letters, digits, '-',
// '_' and dots): url.Parse lets through hosts that no resolver takes.
func hostname(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Addr is host:port.
func (e Endpoint) Addr() string { return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port))) }

// String is the URL without the password, for logs.
func (e Endpoint) String() string {
	if e.Socket != "" {
		return fmt.Sprintf("mysql://%s@localhost?socket=%s", e.User, e.Socket)
	}
	return fmt.Sprintf("mysql://%s@%s", e.User, e.Addr())
}

// GoString keeps %#v (a panic's or a debug print's) free of the password.
func (e Endpoint) GoString() string { return "mysql.Endpoint(" + e.String() + ")" }

// config is the go-sql-driver configuration prepl uses: one round trip
// per batch needs multi-statements, and row-count checks need found rows.
// The password is left out: the connector sets it at each connect.
func (e Endpoint) config() (*driver.Config, error) {
	c := driver.NewConfig()
	c.User = e.User
	if e.Socket != "" {
		c.Net, c.Addr = "unix", e.Socket
	} else {
		c.Net, c.Addr = "tcp", e.Addr()
	}
	c.MultiStatements = true
	c.ClientFoundRows = true
	c.ParseTime = true
	c.Loc = time.UTC
	c.Timeout = 10 * time.Second
	c.Params = map[string]string{"time_zone": "'+00:00'"}
	// The server's max_allowed_packet, read at each connect, not the
	// driver's own 64 MiB: a statement the server would take is sent, and
	// one it would not is refused before a byte of it is (ErrPktTooLarge),
	// where the server would close the connection on it.
	c.MaxAllowedPacket = 0
	tc, fallback, err := e.TLSConfig()
	if err != nil {
		return nil, err
	}
	c.TLS, c.AllowFallbackToPlaintext = tc, fallback
	return c, nil
}

// DSN is a go-sql-driver DSN for e, with its TLS configuration registered
// under a name of its own (driver.RegisterTLSConfig). It holds the
// password: never log it. OpenDB is better: it rereads a password file at
// every connect and explains certificate errors.
func (e Endpoint) DSN() string {
	c, err := e.config()
	if err != nil {
		c = driver.NewConfig()
		c.Net, c.Addr = "tcp", e.Addr()
		c.TLSConfig = "invalid-tls-options" // fails at connect, naming no secret
	}
	if c.TLS != nil {
		name := "prepl-" + strconv.FormatUint(uint64(tlsRegistry.next.Add(1)), 10)
		if driver.RegisterTLSConfig(name, c.TLS) == nil {
			c.TLSConfig, c.TLS = name, nil
		}
	}
	c.Passwd, _ = e.Secret()
	return c.FormatDSN()
}
