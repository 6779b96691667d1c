package metrics

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/prepl/prepl/sandbox"
)

// TestListenWebTLSAndBasicAuth serves with an exporter-toolkit web
// configuration file: HTTPS only, and basic auth with a bcrypt hash.
func TestListenWebTLSAndBasicAuth(t *testing.T) {
	certs := sandbox.MustMakeCerts(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("scrape-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "web.yml")
	os.WriteFile(cfg, []byte("tls_server_config:\n  cert_file: "+certs.ServerCert+"\n  key_file: "+certs.ServerKey+
		"\nbasic_auth_users:\n  prom: "+string(hash)+"\n"), 0o600)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "status document") })
	srv, err := ListenWeb("127.0.0.1:0", h, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	if !strings.HasPrefix(srv.URL(), "https://") {
		t.Errorf("URL %s, want https", srv.URL())
	}
	pem, _ := os.ReadFile(certs.CA)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	get := func(url, user, pw string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if user != "" {
			req.SetBasicAuth(user, pw)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		url, user, pw string
		code          int
	}{
		{srv.URL() + "/status", "prom", "scrape-pw", 200},
		{srv.URL() + "/status", "", "", 401},
		{srv.URL() + "/metrics", "prom", "wrong", 401},
		{"http://" + srv.Addr() + "/status", "prom", "scrape-pw", 400}, // plain HTTP to a TLS port
	} {
		code, body := get(c.url, c.user, c.pw)
		if code != c.code || (c.code == 200) != (body == "status document") {
			t.Errorf("GET %s as %q: %d %q, want %d", c.url, c.user, code, body, c.code)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.yml")
	os.WriteFile(bad, []byte("tls_server_config:\n  cert_file: /nonexistent.pem\n"), 0o600)
	if _, err := ListenWeb("127.0.0.1:0", h, bad, nil); !errors.Is(err, ErrWebConfig) || !strings.Contains(err.Error(), "--web-config "+bad) {
		t.Errorf("a broken web config: %v, want an error naming it", err)
	}
}
