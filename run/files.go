package run

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog/fileset"
)

// CheckBinlogFiles refuses a binlog FILE that is not a regular file.
// prepl reads binlog files from disk: every event is checked against the
// file's size, and replay reads each file twice (the continuity check,
// then the apply). A pipe (bash's <(zcat binlog.000042.gz), a FIFO) has
// no size and gives its bytes once: replay found it empty the second
// time and stopped with "not a binlog file" about a good binlog, and
// analyze reported 0 transactions in it. A missing file is a usage error
// too, before anything connects: replay used to exit 1 (a restart may
// help) on it.
func CheckBinlogFiles(files []string) error {
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%w: binlog file %s does not exist", ErrUsage, f)
			}
			return fmt.Errorf("%w: binlog file %s: %v", ErrUsage, f, err)
		}
		var what string
		switch m := st.Mode(); {
		case m.IsRegular():
			continue
		case m.IsDir():
			return fmt.Errorf("%w: %s is a directory: give the binlog files in it, in order (e.g. %s)",
				ErrUsage, f, filepath.Join(f, "binlog.0*"))
		case m&os.ModeNamedPipe != 0:
			what = "a pipe"
		case m&os.ModeSocket != 0:
			what = "a socket"
		default:
			what = "a device"
		}
		return fmt.Errorf("%w: %s is %s, not a file: prepl reads binlog files from disk (it checks each event against "+
			"the file's size, and replay reads each file twice): write it to one first (e.g. zcat binlog.000042.gz > binlog.000042)",
			ErrUsage, f, what)
	}
	return nil
}

// continuityError is a file set that is not one stream: a mistake a
// restart cannot fix, so exit code 2 like a usage error.
type continuityError struct{ msg string }

func (e *continuityError) Error() string { return e.msg }
func (e *continuityError) Unwrap() error { return ErrUsage }

// scannedFiles is the continuity scan of a file set: a summary of each
// file, or the first error.
type scannedFiles struct {
	sums []fileset.FileSummary
	err  error
}

// scanFiles scans files (fileset.ScanFileFor, calling gtid with each GTID)
// in a goroutine; the result comes on the channel.
func scanFiles(files []string, gtid func(string)) <-chan scannedFiles {
	out := make(chan scannedFiles, 1)
	go func() {
		sums := make([]fileset.FileSummary, len(files))
		for i, f := range files {
			s, err := fileset.ScanFileFor(f, gtid)
			if err != nil {
				out <- scannedFiles{err: err}
				return
			}
			sums[i] = s
		}
		out <- scannedFiles{sums: sums}
	}()
	return out
}

// checkFileSet refuses files that do not form one stream from the position
// already applied (stored, else --start-gtid), before anything is applied.
func checkFileSet(scan scannedFiles, res apply.Resume, startGTID string, allowGaps bool, log *slog.Logger) ([]fileset.FileSummary, error) {
	if scan.err != nil {
		return nil, scan.err
	}
	sums := scan.sums
	problems := fileset.CheckContinuity(sums)
	what, pos, file := "--start-gtid", startGTID, ""
	if res.Found {
		what, pos, file = "the stored position", res.Position.GTIDPos, res.Position.File
	}
	if p := fileset.CheckResume(what, pos, file, sums[0]); p != nil {
		problems = append(problems, *p)
	}
	refuse, warn := fileset.Refusals(problems, allowGaps)
	for _, p := range warn {
		if p.Kind == fileset.Gap {
			log.Warn("applying a file set with a gap (--allow-gaps): " + p.Msg)
		} else {
			log.Warn(p.Msg)
		}
	}
	if len(refuse) == 0 {
		return sums, nil
	}
	msgs := make([]string, len(refuse))
	for i, p := range refuse {
		msgs[i] = p.Msg + remedy(p.Kind)
	}
	return nil, &continuityError{"the files do not form one stream, nothing applied: " + strings.Join(msgs, "\n  ")}
}

func remedy(k fileset.ProblemKind) string {
	switch k {
	case fileset.Gap:
		return "; give the missing files, or --allow-gaps to apply a deliberate subset"
	case fileset.Repeat:
		return "; give each file once"
	}
	return ""
}

// TimeLayout shows a time with its zone, as logs and status do.
const TimeLayout = "2006-01-02 15:04:05 -07:00 MST"
