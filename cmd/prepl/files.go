package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// checkBinlogFiles refuses a binlog FILE that is not a regular file.
// prepl reads binlog files from disk: every event is checked against the
// file's size, and replay reads each file twice (the continuity check,
// then the apply). A pipe (bash's <(zcat binlog.000042.gz), a FIFO) has
// no size and gives its bytes once: replay found it empty the second
// time and stopped with "not a binlog file" about a good binlog, and
// analyze reported 0 transactions in it. A missing file is a usage error
// too, before anything connects: replay used to exit 1 (a restart may
// help) on it.
func checkBinlogFiles(files []string) error {
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%w: binlog file %s does not exist", errUsage, f)
			}
			return fmt.Errorf("%w: binlog file %s: %v", errUsage, f, err)
		}
		var what string
		switch m := st.Mode(); {
		case m.IsRegular():
			continue
		case m.IsDir():
			return fmt.Errorf("%w: %s is a directory: give the binlog files in it, in order (e.g. %s)",
				errUsage, f, filepath.Join(f, "binlog.0*"))
		case m&os.ModeNamedPipe != 0:
			what = "a pipe"
		case m&os.ModeSocket != 0:
			what = "a socket"
		default:
			what = "a device"
		}
		return fmt.Errorf("%w: %s is %s, not a file: prepl reads binlog files from disk (it checks each event against "+
			"the file's size, and replay reads each file twice): write it to one first (e.g. zcat binlog.000042.gz > binlog.000042)",
			errUsage, f, what)
	}
	return nil
}
