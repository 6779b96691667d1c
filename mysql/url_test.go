package mysql

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

func TestParseURLOptionsAndSecrets(t *testing.T) {
	cases := []struct {
		in   string
		want Endpoint
		err  string
	}{
		{in: "mysql://repl:pw@db1:3307", want: Endpoint{User: "repl", Password: "pw", Host: "db1", Port: 3307, TLS: TLSOptions{Mode: Preferred}}},
		{in: "mysql://db1", want: Endpoint{User: "root", Host: "db1", Port: 3306, TLS: TLSOptions{Mode: Preferred}}},
		{in: "mysql://u@h?ssl-mode=verify_identity&ssl-ca=/ca.pem", want: Endpoint{User: "u", Host: "h", Port: 3306, TLS: TLSOptions{Mode: VerifyIdentity, CA: "/ca.pem"}}},
		{in: "mysql://u@h?ssl_ca=/ca.pem", want: Endpoint{User: "u", Host: "h", Port: 3306, TLS: TLSOptions{Mode: VerifyCA, CA: "/ca.pem"}}},
		{in: "mysql://u@h?ssl-mode=REQUIRED&ssl-cert=/c&ssl-key=/k", want: Endpoint{User: "u", Host: "h", Port: 3306, TLS: TLSOptions{Mode: Required, Cert: "/c", Key: "/k"}}},
		{in: "mysql://u@localhost?socket=/s.sock", want: Endpoint{User: "u", Host: "localhost", Port: 3306, Socket: "/s.sock", TLS: TLSOptions{Mode: Preferred}}},
		{in: "mysql://u:Pw9xx@h?tls=true", err: `bad URL mysql://u:***@h?tls=true: unknown parameter "tls"`},
		{in: "mysql://u:Pw9xx@h:0", err: `port "0"`},
		{in: "mysql://u:Pw9xx@h?ssl-mode=on", err: `ssl-mode "on": want one of`},
		{in: "mysql://u:Pw9xx@h?ssl-cert=/c", err: "ssl-cert and ssl-key go together"},
		{in: "mysql://u:Pw9xx@h?ssl-mode=DISABLED&ssl-ca=/c", err: "ssl-mode=DISABLED with ssl-ca"},
		{in: "postgres://u:Pw9xx@h", err: "scheme must be mysql://"},
		{in: "mysql://u:Pw%9xx@h", err: "invalid URL escape"},
	}
	for _, c := range cases {
		got, err := ParseURL(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseURL(%q) error %v, want %q", c.in, err, c.err)
		case c.err != "" && strings.Contains(err.Error(), "Pw"):
			t.Errorf("ParseURL(%q) error shows the password: %v", c.in, err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	e, _ := ParseURL("mysql://u:Pw9xx@h")
	for _, s := range []string{e.String(), fmt.Sprintf("%v %+v %#v %s", e, e, e, e)} {
		if strings.Contains(s, "Pw9xx") {
			t.Errorf("formatting shows the password: %s", s)
		}
	}
}

// TestTLSConfigModes: what each ssl-mode asks of the server's certificate.
func TestTLSConfigModes(t *testing.T) {
	certs := sandbox.MustMakeCerts(t)
	for _, c := range []struct {
		mode             SSLMode
		socket           bool
		none, fallback   bool
		skipName, verify bool
		serverName       string
	}{
		{mode: Disabled, none: true},
		{mode: Preferred, fallback: true, skipName: true},
		{mode: Preferred, socket: true, none: true},
		{mode: Required, skipName: true},
		{mode: VerifyCA, skipName: true, verify: true},
		{mode: VerifyIdentity, serverName: "db1"},
	} {
		e := Endpoint{Host: "db1", Port: 3306, TLS: TLSOptions{Mode: c.mode, CA: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}}
		if c.mode == Disabled {
			e.TLS = TLSOptions{Mode: Disabled}
		}
		if c.socket {
			e.Socket = "/s"
		}
		cfg, fallback, err := e.TLSConfig()
		if err != nil {
			t.Fatalf("%s: %v", c.mode, err)
		}
		if (cfg == nil) != c.none || fallback != c.fallback {
			t.Errorf("%s socket=%v: config %v fallback %v", c.mode, c.socket, cfg != nil, fallback)
			continue
		}
		if cfg == nil {
			continue
		}
		if cfg.InsecureSkipVerify != c.skipName || (cfg.VerifyPeerCertificate != nil) != c.verify || cfg.ServerName != c.serverName ||
			len(cfg.Certificates) != 1 || cfg.MinVersion != tls.VersionTLS12 {
			t.Errorf("%s: %+v", c.mode, cfg)
		}
	}
	// VERIFY_CA's own chain check: the sandbox CA's server certificate
	// passes, another CA's does not.
	other := sandbox.MustMakeCerts(t)
	pair, err := tls.LoadX509KeyPair(certs.ServerCert, certs.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	for ca, ok := range map[string]bool{certs.CA: true, other.CA: false} {
		cfg, _, err := Endpoint{Host: "elsewhere", TLS: TLSOptions{Mode: VerifyCA, CA: ca}}.TLSConfig()
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.VerifyPeerCertificate(pair.Certificate, nil); (err == nil) != ok {
			t.Errorf("VERIFY_CA with %s: %v, want ok=%v", filepath.Base(filepath.Dir(ca)), err, ok)
		}
	}
}
