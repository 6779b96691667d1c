package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPipesAndDirectoriesRefused: a binlog FILE that is a pipe (bash's
// <(zcat f.gz), a FIFO), a device or a directory is refused by replay and
// analyze with exit 2 and a message saying what it is and what to do,
// before anything is read. Replay found a pipe empty on its second read
// ("not a binlog file", about a good binlog); analyze reported 0
// transactions in it. The binary runs with a timeout: a command that
// opened the FIFO would wait for a writer forever.
func TestPipesAndDirectoriesRefused(t *testing.T) {
	t.Parallel()
	bin := preplBinary(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "binlog.000001")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(fixtureDir, "mysql-bin.checksum-crc32")
	for _, cmd := range [][]string{{"replay", "--dry-run"}, {"analyze"}} {
		for _, c := range []struct {
			name  string
			files []string
			want  string
		}{
			{"pipe", []string{fifo}, fifo + " is a pipe, not a file: prepl reads binlog files from disk"},
			{"pipe after a good file", []string{good, fifo}, fifo + " is a pipe"},
			{"device", []string{os.DevNull}, os.DevNull + " is a device, not a file"},
			{"directory", []string{dir}, dir + " is a directory: give the binlog files in it, in order (e.g. " + filepath.Join(dir, "binlog.0*") + ")"},
		} {
			t.Run(cmd[0]+"/"+c.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				out, err := exec.CommandContext(ctx, bin, append(append([]string{}, cmd...), c.files...)...).CombinedOutput()
				code := -1
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				if ctx.Err() != nil || code != 2 || !strings.Contains(string(out), c.want) {
					t.Errorf("exit %d (%v), want 2 saying %q:\n%s", code, ctx.Err(), c.want, out)
				}
			})
		}
	}
}
