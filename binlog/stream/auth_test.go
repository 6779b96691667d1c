package stream

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/prepl/prepl/mysql"
)

// versionHandler answers a SELECT with one value, VERSION() as a MySQL
// 8.4 server's, @@max_allowed_packet (the SQL driver asks at connect) as
// 64 MiB, any other 1; other statements with OK.
type versionHandler struct{ server.EmptyHandler }

func (versionHandler) HandleQuery(q string) (*gomysql.Result, error) {
	u := strings.ToUpper(q)
	if !strings.HasPrefix(strings.TrimSpace(u), "SELECT") {
		return nil, nil
	}
	var v any = "1"
	switch {
	case strings.Contains(u, "VERSION()"):
		v = "8.4.3"
	case strings.Contains(u, "MAX_ALLOWED_PACKET"):
		v = "67108864"
	}
	rs, err := gomysql.BuildSimpleTextResultset([]string{"v"}, [][]any{{v}})
	if err != nil {
		return nil, err
	}
	return gomysql.NewResult(rs), nil
}

// packetWise delivers each packet the server writes in a read of its
// own (go-mysql's server writes one packet per Write): a client then
// reads a result row and the packet that ends the result separately, as
// it can from a real server over a network. go-sql-driver before v1.10
// read @@max_allowed_packet at connect from a buffer the end packet then
// overwrote ("invalid max_allowed_packet value"), which only this timing
// shows.
type packetWise struct{ net.Conn }

func (c packetWise) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	time.Sleep(2 * time.Millisecond)
	return n, err
}

// TestCachingSha2Password: both of prepl's connections to a source, the
// replication connection (go-mysql) and the SQL one (go-sql-driver, as
// mysql.Endpoint opens it), authenticate to a server whose user has
// caching_sha2_password, MySQL 8's default, without TLS: the first
// connection through the full authentication (the password encrypted
// with the server's RSA key, which the client asks for), the next ones
// through the server's cache; a wrong password is refused. The server is
// go-mysql's implementation of the protocol: no MySQL server runs here.
func TestCachingSha2Password(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// listen serves connections with a server of its own: its cache of
	// authenticated users starts empty, so that each client's first
	// connection takes the full authentication.
	listen := func(accepted *atomic.Int32) *net.TCPAddr {
		srv := server.NewServer("8.4.3", gomysql.DEFAULT_COLLATION_ID, gomysql.AUTH_CACHING_SHA2_PASSWORD, key, nil)
		auth := server.NewInMemoryAuthenticationHandler(gomysql.AUTH_CACHING_SHA2_PASSWORD)
		if err := auth.AddUser("repl", "s3cret", gomysql.AUTH_CACHING_SHA2_PASSWORD); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					sc, err := server.NewCustomizedConn(packetWise{c}, srv, auth, versionHandler{})
					if err != nil {
						return // refused: the client sees the error packet
					}
					accepted.Add(1)
					for sc.HandleCommand() == nil {
					}
				}()
			}
		}()
		return l.Addr().(*net.TCPAddr)
	}
	ctx := context.Background()
	passwords := []string{"s3cret", "s3cret", "wrong"} // full authentication, cached, refused

	var replAccepted atomic.Int32
	addr := listen(&replAccepted)
	for i, pw := range passwords {
		r := &Reader{cfg: Config{Host: "127.0.0.1", Port: uint16(addr.Port), User: "repl", Password: pw}}
		c, err := r.dial(ctx)
		if pw == "wrong" {
			if err == nil {
				c.Close()
				t.Fatal("the replication connection authenticated with a wrong password")
			}
			continue
		}
		if err != nil {
			t.Fatalf("replication connection %d: %v", i+1, err)
		}
		if v, err := queryString(c, "SELECT VERSION()"); err != nil || v != "8.4.3" {
			t.Errorf("replication connection %d: VERSION() %q %v", i+1, v, err)
		}
		c.Close()
	}

	var sqlAccepted atomic.Int32
	addr = listen(&sqlAccepted)
	for i, pw := range passwords {
		e, err := mysql.ParseURL("mysql://repl@" + addr.String() + "?ssl-mode=DISABLED")
		if err != nil {
			t.Fatal(err)
		}
		e.Password = pw
		db, err := e.OpenDB()
		if err != nil {
			t.Fatal(err)
		}
		var v string
		err = db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v)
		db.Close()
		if pw == "wrong" {
			if err == nil {
				t.Fatal("the SQL connection authenticated with a wrong password")
			}
			continue
		}
		if err != nil || v != "8.4.3" {
			t.Fatalf("SQL connection %d: VERSION() %q %v", i+1, v, err)
		}
	}
	if r, q := replAccepted.Load(), sqlAccepted.Load(); r != 2 || q != 2 {
		t.Errorf("connections authenticated: %d replication, %d SQL; want 2 each", r, q)
	}
}
