package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretFilePermissions: a config file holding a password that others
// may read is named in a warning with its mode, or refused with
// --strict-permissions; one without a password, or with mode 0600, is not.
func TestSecretFilePermissions(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), mode)
		os.Chmod(p, mode)
		return p
	}
	loose := write("loose.toml", "target = \"mysql://prepl:CfgPw-31@127.0.0.1:1\"\nreconnect-timeout = \"0s\"\n", 0o644)
	tight := write("tight.toml", "target = \"mysql://prepl:CfgPw-31@127.0.0.1:1\"\nreconnect-timeout = \"0s\"\n", 0o600)
	noSecret := write("nosecret.toml", "target = \"mysql://prepl@127.0.0.1:1\"\nreconnect-timeout = \"0s\"\n", 0o644)
	pwFile := write("target.pw", "FilePw-32\n", 0o640)

	cases := []struct {
		args     []string
		code     int
		warnings string // "" none
	}{
		{[]string{"--config", loose}, statusCritical, "--config " + loose + " holds a password and is readable by group and others (mode 0644): chmod 600 " + loose},
		{[]string{"--config", loose, "--strict-permissions"}, 2, "refused: --strict-permissions"},
		{[]string{"--config", tight}, statusCritical, ""},
		{[]string{"--config", noSecret}, statusCritical, ""},
		{[]string{"--config", noSecret, "--target-password-file", pwFile}, statusCritical, "--target-password-file " + pwFile + " holds a password and is readable by group (mode 0640)"},
		{[]string{"--config", noSecret, "--target-password-file", pwFile, "--strict-permissions"}, 2, "refused: --strict-permissions"},
	}
	for _, c := range cases {
		code, out := prepl(t, append([]string{"status"}, c.args...)...)
		// Every case is refused, or gets past the configuration to connecting.
		reached := strings.Contains(out, "refused: --strict-permissions") || strings.Contains(out, "cannot read the target: connect to target mysql://prepl@127.0.0.1:1")
		if code != c.code || !reached || (c.warnings == "") != !strings.Contains(out, "holds a password") ||
			c.warnings != "" && !strings.Contains(out, c.warnings) || strings.Contains(out, "CfgPw-31") || strings.Contains(out, "FilePw-32") {
			t.Errorf("status %s: exit %d, want %d; want warning %q:\n%s", strings.Join(c.args, " "), code, c.code, c.warnings, out)
		}
	}
}
