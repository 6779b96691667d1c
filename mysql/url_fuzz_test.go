package mysql

import (
	"net"
	"strings"
	"testing"
)

// FuzzParseURL: any --source/--target text. Must never panic; a URL that
// parses gives an address that splits back into its host and port, and a
// DSN the driver can build.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"mysql://root@127.0.0.1:3306", "mysql://u:p%40ss@[::1]:3307", "mariadb://repl:secret@db.example.com",
		"mysql://root@localhost?socket=/run/mysqld/mysqld.sock", "mysql://x@h:99999", "http://x", "mysql://%zz@h",
		"mysql://u@h:1?socket=a&b=c", "mysql://:@:0", "mysql:///?socket=%00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		e, err := ParseURL(raw)
		if err != nil {
			if !strings.Contains(err.Error(), "bad URL") {
				t.Fatalf("ParseURL(%q): error %q does not say the URL is bad", raw, err)
			}
			return
		}
		if e.User == "" || (e.Host == "" && e.Socket == "") {
			t.Fatalf("ParseURL(%q) = %+v: no user, or neither host nor socket", raw, e)
		}
		host, port, err := net.SplitHostPort(e.Addr())
		if err != nil || host != e.Host || port == "" {
			t.Fatalf("ParseURL(%q): address %q does not split back: %v", raw, e.Addr(), err)
		}
		_ = e.DSN()
		_ = e.String()
	})
}
