package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzConfig: any config file, applied to replay's flags. Must never
// panic; a file that does not apply is a usage error (exit 2).
func FuzzConfig(f *testing.F) {
	for _, s := range []string{
		"target = \"mysql://root@127.0.0.1:3306\"\nworkers = 8\n[replay]\ninclude = [\"shop.*\", \"app.*\"]\n",
		"progress = \"10s\"\nprogress-bar = false\nmax-event-size = \"1GiB\"\n",
		"[replicate]\nworkers = 2\n[status]\nchannel = \"x\"\n",
		"workers = 1.5\n", "workers = [1, 2]\n", "config = \"other.toml\"\n", "[nosuch]\n", "stop-datetime = 2026-11-20T09:59:00Z\n",
		"stop-datetime = 2026-11-20 09:59:00\n", "a = {b = 1}\n", "include = [[1]]\n", "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "prepl.toml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fs := flag.NewFlagSet("replay", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var af applyFlags
		af.register(fs, "replay")
		fs.String("stop-datetime", "", "")
		var skip multiFlag
		fs.Var(&skip, "skip-gtid", "")
		if err := parseFlags(fs, []string{"--config", path}); err != nil && !errors.Is(err, errUsage) {
			t.Fatalf("config %q: error %v is not a usage error", data, err)
		}
	})
}
