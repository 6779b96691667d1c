// Package mysql is prepl's MySQL/MariaDB target: the SQL dialect, the
// target's schema catalog, error classes and the position table.
package mysql

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	driver "github.com/go-sql-driver/mysql"
)

// Endpoint is a parsed mysql://USER:PASS@HOST:PORT[/?socket=PATH] URL.
type Endpoint struct {
	User     string
	Password string
	Host     string
	Port     uint16
	Socket   string
}

// ParseURL parses a prepl connection URL.
func ParseURL(raw string) (Endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Endpoint{}, fmt.Errorf("bad URL %q: %w", raw, err)
	}
	if u.Scheme != "mysql" && u.Scheme != "mariadb" {
		return Endpoint{}, fmt.Errorf("bad URL %q: scheme must be mysql:// (mysql://USER:PASS@HOST:PORT)", raw)
	}
	e := Endpoint{User: u.User.Username(), Host: u.Hostname(), Port: 3306, Socket: u.Query().Get("socket")}
	e.Password, _ = u.User.Password()
	if e.User == "" {
		e.User = "root"
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return Endpoint{}, fmt.Errorf("bad URL %q: port %q", raw, p)
		}
		e.Port = uint16(n)
	}
	if e.Host != "" && net.ParseIP(e.Host) == nil && !hostname(e.Host) {
		return Endpoint{}, fmt.Errorf("bad URL %q: host %q is neither an IP address nor a host name", raw, e.Host)
	}
	if e.Host == "" && e.Socket == "" {
		e.Host = "127.0.0.1"
	}
	for k := range u.Query() {
		if k != "socket" {
			return Endpoint{}, fmt.Errorf("bad URL %q: unknown parameter %q (only socket= is accepted)", raw, k)
		}
	}
	return e, nil
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

// DSN is the go-sql-driver DSN prepl uses on the target: one round trip per
// batch needs multi-statements, and row-count checks need found rows.
func (e Endpoint) DSN() string {
	c := driver.NewConfig()
	c.User, c.Passwd = e.User, e.Password
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
	return c.FormatDSN()
}
