package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prepl/prepl/mysql"
)

func TestReadOptionFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "my.cnf")
	os.WriteFile(p, []byte(`# comment
[mysqld]
password = server-side
[client]
user = repl
password = "a \"quoted\" pw"
host=db1
port = 3307
ssl_mode = verify_identity
ssl-ca = '/etc/ca.pem'   
[mysqldump]
user = other
`), 0o600)
	e, err := readOptionFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want := mysql.Endpoint{User: "repl", Password: `a "quoted" pw`, Host: "db1", Port: 3307,
		TLS: mysql.TLSOptions{Mode: mysql.VerifyIdentity, CA: "/etc/ca.pem"}}
	if e != want {
		t.Errorf("got %#v %+v, want %+v", e, e.TLS, want.TLS)
	}
}
