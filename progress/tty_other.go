//go:build !linux

package progress

import "os"

// IsTerminal reports whether f is a character device other than
// /dev/null: a terminal, as far as can be told without terminal ioctls.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

func width(*os.File) int { return 0 }
