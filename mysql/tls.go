package mysql

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	gomysql "github.com/go-sql-driver/mysql"
)

// SSLMode is the mysql client's --ssl-mode.
type SSLMode string

// The modes, as the mysql client has them.
const (
	// Disabled: plain connections only.
	Disabled SSLMode = "DISABLED"
	// Preferred: TLS when the server offers it, plain otherwise; the
	// server's certificate is not checked. The default, as in the mysql
	// client (go-sql-driver's tls=preferred).
	Preferred SSLMode = "PREFERRED"
	// Required: TLS or no connection; the certificate is not checked.
	Required SSLMode = "REQUIRED"
	// VerifyCA: TLS, and the server's certificate must chain to ssl-ca
	// (or the system's roots); its name is not checked.
	VerifyCA SSLMode = "VERIFY_CA"
	// VerifyIdentity: as VerifyCA, and the certificate must name the host
	// connected to.
	VerifyIdentity SSLMode = "VERIFY_IDENTITY"
)

// SSLModes lists the modes, weakest first.
var SSLModes = []SSLMode{Disabled, Preferred, Required, VerifyCA, VerifyIdentity}

// ParseSSLMode reads a mode in any case, with - or _.
func ParseSSLMode(s string) (SSLMode, error) {
	m := SSLMode(strings.ReplaceAll(strings.ToUpper(strings.TrimSpace(s)), "-", "_"))
	for _, k := range SSLModes {
		if m == k {
			return m, nil
		}
	}
	names := make([]string, len(SSLModes))
	for i, k := range SSLModes {
		names[i] = string(k)
	}
	return "", fmt.Errorf("ssl-mode %q: want one of %s", s, strings.Join(names, ", "))
}

// Verified tells whether the mode checks the server's certificate.
func (m SSLMode) Verified() bool { return m == VerifyCA || m == VerifyIdentity }

// TLSOptions are the mysql client's ssl-* options.
type TLSOptions struct {
	Mode SSLMode // "" until WithDefaults
	CA   string  // PEM file of the CA certificates to trust
	Cert string  // PEM file of the client certificate
	Key  string  // PEM file of its private key
}

// TLSConfig is the TLS configuration of e's mode: nil for DISABLED (and
// for PREFERRED on a Unix socket, which the mysql client does not
// encrypt either); fallback says a server without TLS may be talked to in
// plain (PREFERRED).
func (e Endpoint) TLSConfig() (cfg *tls.Config, fallback bool, err error) {
	o := e.TLS
	switch o.Mode {
	case Disabled:
		return nil, false, nil
	case Preferred, "":
		if e.Socket != "" {
			return nil, false, nil
		}
	}
	cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	if o.Cert != "" {
		pair, err := tls.LoadX509KeyPair(o.Cert, o.Key)
		if err != nil {
			return nil, false, fmt.Errorf("%s: ssl-cert %s / ssl-key %s: %w", e, o.Cert, o.Key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	var roots *x509.CertPool // nil: the system's
	if o.CA != "" {
		pem, err := os.ReadFile(o.CA)
		if err != nil {
			return nil, false, fmt.Errorf("%s: ssl-ca: %w", e, err)
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, false, fmt.Errorf("%s: ssl-ca %s holds no PEM certificate", e, o.CA)
		}
	}
	switch o.Mode {
	case Preferred, "", Required:
		cfg.InsecureSkipVerify = true
		return cfg, o.Mode != Required, nil
	case VerifyCA:
		// Go checks the chain and the name together; the name is left out
		// here, so the chain is checked by hand.
		cfg.InsecureSkipVerify = true
		cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyChain(raw, roots)
		}
	case VerifyIdentity:
		cfg.RootCAs = roots
		cfg.ServerName = e.Host
		if e.Socket != "" {
			cfg.ServerName = "localhost"
		}
	}
	return cfg, false, nil
}

func verifyChain(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("the server sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, r := range raw {
		c, err := x509.ParseCertificate(r)
		if err != nil {
			return err
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
	return err
}

var tlsRegistry struct{ next atomic.Uint64 }

// OpenDB opens a pool to e. Each new connection reads the password again
// (a password file rotated since is picked up) and a certificate error
// is explained with the ssl-* options that caused it.
func (e Endpoint) OpenDB() (*sql.DB, error) {
	c, err := e.config()
	if err != nil {
		return nil, err
	}
	if err := c.Apply(gomysql.BeforeConnect(func(_ context.Context, c *gomysql.Config) error {
		pw, err := e.Secret()
		c.Passwd = pw
		return err
	})); err != nil {
		return nil, err
	}
	conn, err := gomysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(explainTLS{conn, e}), nil
}

// explainTLS names the ssl-* options in a TLS error.
type explainTLS struct {
	driver.Connector
	e Endpoint
}

func (x explainTLS) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := x.Connector.Connect(ctx)
	if err != nil {
		return nil, ExplainTLSError(x.e, err)
	}
	return c, nil
}

// ExplainTLSError adds to a failed connect's error what the TLS options
// were and what to check, when the failure is TLS's.
func ExplainTLSError(e Endpoint, err error) error {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var inv x509.CertificateInvalidError
	var rec *tls.RecordHeaderError
	msg := err.Error()
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("TLS to %s: the server's certificate is not signed by a CA in ssl-ca=%s (ssl-mode=%s): give the CA that signed the server's certificate: %w",
			e, orSystem(e.TLS.CA), e.TLS.Mode, err)
	case errors.As(err, &host):
		return fmt.Errorf("TLS to %s: the server's certificate does not name host %q (ssl-mode=VERIFY_IDENTITY): connect by a name the certificate has, or use ssl-mode=VERIFY_CA: %w",
			e, e.Host, err)
	case errors.As(err, &inv):
		return fmt.Errorf("TLS to %s: the server's certificate is invalid (ssl-mode=%s): %w", e, e.TLS.Mode, err)
	case errors.As(err, &rec), strings.Contains(msg, "does not support TLS"), errors.Is(err, gomysql.ErrNoTLS):
		return fmt.Errorf("TLS to %s: the server does not offer TLS, and ssl-mode=%s requires it: configure ssl_cert/ssl_key on the server, or lower ssl-mode: %w",
			e, e.TLS.Mode, err)
	case strings.Contains(msg, "tls:") || strings.Contains(msg, "x509:"):
		return fmt.Errorf("TLS to %s (ssl-mode=%s, ssl-ca=%s): %w", e, e.TLS.Mode, orSystem(e.TLS.CA), err)
	}
	return err
}

func orSystem(ca string) string {
	if ca == "" {
		return "(system roots)"
	}
	return ca
}

// Security says how a session on db is protected, for the start-up log
// line: "TLS TLS_AES_256_GCM_SHA384, verified (VERIFY_IDENTITY)", "TLS
// ..., not verified (PREFERRED)" or "plain (...)".
func Security(ctx context.Context, db *sql.DB, e Endpoint) string {
	var name, cipher string
	if err := db.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return DescribeTLS(cipher, e.TLS.Mode)
}

// Security says how the target's connection is protected, for a run's
// start line.
func (t *Target) Security(ctx context.Context) string { return Security(ctx, t.DB, t.Endpoint) }

// DescribeTLS words a session's Ssl_cipher under mode.
func DescribeTLS(cipher string, mode SSLMode) string {
	switch {
	case cipher == "" && mode == Disabled:
		return "plain (ssl-mode=DISABLED)"
	case cipher == "":
		return fmt.Sprintf("plain: the server offers no TLS (ssl-mode=%s)", mode)
	case mode.Verified():
		return fmt.Sprintf("TLS %s, certificate verified (ssl-mode=%s)", cipher, mode)
	}
	return fmt.Sprintf("TLS %s, certificate not verified (ssl-mode=%s)", cipher, mode)
}
