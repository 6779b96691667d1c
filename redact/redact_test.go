package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestSQL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"CREATE USER 'app'@'%' IDENTIFIED BY 'AppPlainPw1'", "CREATE USER 'app'@'%' IDENTIFIED BY '***'"},
		{"create user app identified by \"Dq'pw\"", "create user app identified by \"***\""},
		{"ALTER USER 'a'@'h' IDENTIFIED BY 'it''s \\' secret'", "ALTER USER 'a'@'h' IDENTIFIED BY '***'"},
		{"GRANT SELECT ON *.* TO 'u'@'%' IDENTIFIED BY 'GrantPw9'", "GRANT SELECT ON *.* TO 'u'@'%' IDENTIFIED BY '***'"},
		{"GRANT ALL ON db.* TO u IDENTIFIED BY PASSWORD '*94BDCEBE19083CE2A1F959FD02F964C7AF4CFC29'", "GRANT ALL ON db.* TO u IDENTIFIED BY PASSWORD '***'"},
		{"SET PASSWORD FOR 'u'@'h' = PASSWORD('NewPw2')", "SET PASSWORD FOR 'u'@'h' = PASSWORD('***')"},
		{"SET PASSWORD = OLD_PASSWORD ( 'NewPw3' )", "SET PASSWORD = OLD_PASSWORD ( '***' )"},
		{"SET PASSWORD FOR 'u'@'h' = '*6C8989366EAF75BB670AD8EA7A7FC1176A95CEF4'", "SET PASSWORD FOR 'u'@'h' = '***'"},
		{"CREATE USER x IDENTIFIED VIA ed25519 USING PASSWORD('EdPw4')", "CREATE USER x IDENTIFIED VIA ed25519 USING PASSWORD('***')"},
		{"CREATE USER x IDENTIFIED VIA mysql_native_password USING '*hash' OR unix_socket", "CREATE USER x IDENTIFIED VIA mysql_native_password USING '***' OR unix_socket"},
		{"CREATE USER x IDENTIFIED WITH caching_sha2_password AS '$A$005$salt'", "CREATE USER x IDENTIFIED WITH caching_sha2_password AS '***'"},
		// A comment between the keyword and the secret is not a token of
		// the statement; MariaDB runs the body of /*M! ... */.
		{"CREATE USER x IDENTIFIED BY -- the password\n 'CommentPw5'", "CREATE USER x IDENTIFIED BY -- the password\n '***'"},
		{"CREATE USER x IDENTIFIED BY # it's\n'HashPw6'", "CREATE USER x IDENTIFIED BY # it's\n'***'"},
		{"CREATE USER x /*M!100000 IDENTIFIED BY 'ExecPw7' */", "CREATE USER x /*M!100000 IDENTIFIED BY '***' */"},
		{"CREATE USER x IDENTIFIED WITH mysql_native_password BY 'Pw5'", "CREATE USER x IDENTIFIED WITH mysql_native_password BY '***'"},
		{"CREATE USER x IDENTIFIED BY _utf8mb4'IntroPw6'", "CREATE USER x IDENTIFIED BY _utf8mb4'***'"},
		{"CHANGE MASTER TO MASTER_HOST='h', MASTER_PASSWORD = 'MPw7'", "CHANGE MASTER TO MASTER_HOST='h', MASTER_PASSWORD = '***'"},
		{"CREATE USER x IDENTIFIED BY 'unterminated", "CREATE USER x IDENTIFIED BY '***'"},
		// Not account statements: left alone.
		{"CREATE TABLE t (a INT) COMMENT 'by'", "CREATE TABLE t (a INT) COMMENT 'by'"},
		{"CREATE VIEW v AS SELECT 'x' AS c", "CREATE VIEW v AS SELECT 'x' AS c"},
		{"ALTER TABLE `identified by` ADD c INT DEFAULT 'x'", "ALTER TABLE `identified by` ADD c INT DEFAULT 'x'"},
	}
	for _, c := range cases {
		if got := SQL(c.in); got != c.want {
			t.Errorf("SQL(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestURL(t *testing.T) {
	cases := []struct{ in, secret string }{
		{"mysql://repl:S3cr3t@db1:3306?tls=true", "S3cr3t"},
		{"mysql://repl:p@ss/w?rd@db1:3306", "p@ss/w?rd"},
		{"mysql://repl:bad%zzPw@db1", "bad%zzPw"},
		{"http://[bad:Secret9@host", "Secret9"},
		{"mysql://u@h?password=QueryPw1&ssl-mode=REQUIRED", "QueryPw1"},
	}
	for _, c := range cases {
		got := URL(c.in)
		if strings.Contains(got, c.secret) || !strings.Contains(got, Mask) {
			t.Errorf("URL(%q) = %q: the password shows or nothing is masked", c.in, got)
		}
	}
}

func TestHandlerMasksRegisteredSecrets(t *testing.T) {
	Add("HandlerPw42", "ab") // "ab" is too short to mask
	for _, json := range []bool{false, true} {
		var buf bytes.Buffer
		var h slog.Handler = slog.NewTextHandler(&buf, nil)
		if json {
			h = slog.NewJSONHandler(&buf, nil)
		}
		l := slog.New(Handler(h)).With("url", "mysql://u:HandlerPw42@h")
		l.Error("connect failed: HandlerPw42", "err", errors.New("Access denied using HandlerPw42"),
			slog.Group("g", "pw", "x HandlerPw42 y"), "n", 3, "about", "ab")
		out := buf.String()
		if strings.Contains(out, "HandlerPw42") || strings.Count(out, Mask) != 4 || !strings.Contains(out, "ab") {
			t.Errorf("json=%v: %s", json, out)
		}
	}
	if got := String("a HandlerPw42 b"); got != "a *** b" {
		t.Errorf("String = %q", got)
	}
}

func TestHandlerKeepsValues(t *testing.T) {
	Add("KeepPw-123")
	var buf bytes.Buffer
	slog.New(Handler(slog.NewJSONHandler(&buf, nil))).Info("m", "counts", map[string]int{"a": 1},
		"leaky", struct{ URL string }{"mysql://u:KeepPw-123@h"})
	if out := buf.String(); !strings.Contains(out, `"counts":{"a":1}`) || strings.Contains(out, "KeepPw-123") {
		t.Errorf("%s", out)
	}
}
