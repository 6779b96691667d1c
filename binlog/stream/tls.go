package stream

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
)

// errNoTLS is go-mysql's complaint about a server without TLS.
const errNoTLS = "does not support TLS"

// password is the password for the next connect.
func (s *Reader) password() (string, error) {
	if s.cfg.PasswordFunc != nil {
		pw, err := s.cfg.PasswordFunc()
		if err != nil {
			return "", fmt.Errorf("binlog stream: source password: %w", err)
		}
		return pw, nil
	}
	return s.cfg.Password, nil
}

// dial opens the plain query connection Open inspects the source
// with, with the stream's TLS settings. A source without TLS under
// TLSFallback is read in plain from then on (the syncer gets TLS nil).
// The session's cipher is kept for Cipher.
func (s *Reader) dial(ctx context.Context) (*client.Conn, error) {
	pw, err := s.password()
	if err != nil {
		return nil, err
	}
	connect := func() (*client.Conn, error) {
		// The dialer's deadline bounds the handshake and inspect's
		// queries: a source that accepts and never answers fails in time.
		l := &link{}
		defer context.AfterFunc(ctx, l.closeAll)()
		return s.connect(ctx, l, pw)
	}
	conn, err := connect()
	if err != nil && s.cfg.TLS != nil && s.cfg.TLSFallback && strings.Contains(err.Error(), errNoTLS) {
		s.cfg.TLS = nil
		conn, err = connect()
	}
	if err != nil {
		return nil, err
	}
	s.cipher = ""
	if r, err := conn.Execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'"); err == nil && r.RowNumber() > 0 {
		s.cipher, _ = resultString(r, 0, 1)
	}
	return conn, nil
}

// connect opens a connection to the source with the stream's TLS
// settings, its sockets held by l (dialer).
func (s *Reader) connect(ctx context.Context, l *link, password string, opts ...client.Option) (*client.Conn, error) {
	tc := s.cfg.TLS
	opts = append(opts, func(c *client.Conn) error { c.SetTLSConfig(tc); return nil })
	return client.ConnectWithDialer(ctx, "tcp", s.addr(), s.cfg.User, password, "", s.dialer(l), opts...)
}

// addr is the source's host:port.
func (s *Reader) addr() string {
	return net.JoinHostPort(s.cfg.Host, strconv.Itoa(int(s.cfg.Port)))
}

// Cipher is the TLS cipher of the source session Open opened, ""
// when it is plain. The replication connection uses the same settings.
func (s *Reader) Cipher() string { return s.cipher }
