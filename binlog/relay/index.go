package relay

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The index, DIR/relay.index, says the source's GTID position each relay
// file starts at, a line per file ("relay.000002 0-1-100,1-1-5"; "-" for
// none known): the stream resumes by GTID at the log's end, which a
// source that purged the binlog of the log's end still serves. The line
// is durable before its file is created; a line without its file (the
// file purged, or never created) is ignored. The file's source file and
// offset are in its head.
const indexName = "relay.index"

// appendIndex adds seq's line to the index, durably.
func appendIndex(dir string, seq int, gtid string) error {
	f, err := os.OpenFile(filepath.Join(dir, indexName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("relay log: %w", err)
	}
	if _, err := f.WriteString(indexLine(seq, gtid)); err != nil {
		f.Close()
		return fmt.Errorf("relay log: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("relay log: fsync %s: %w", f.Name(), err)
	}
	return f.Close()
}

func indexLine(seq int, gtid string) string {
	if gtid == "" {
		gtid = "-"
	}
	return fileName(seq) + " " + strings.ReplaceAll(gtid, "\n", "") + "\n"
}

// parseIndex reads an index's lines: each file's GTID position. A last
// line without its newline (cut by a crash) is left out.
func parseIndex(b []byte) map[int]string {
	out := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	complete := len(b) == 0 || b[len(b)-1] == '\n'
	lines := strings.Count(string(b), "\n")
	for i := 0; sc.Scan(); i++ {
		if i == lines && !complete {
			break
		}
		name, gtid, ok := strings.Cut(sc.Text(), " ")
		seq, ok2 := parseSeq(name)
		if !ok || !ok2 {
			continue
		}
		if gtid == "-" {
			gtid = ""
		}
		out[seq] = gtid
	}
	return out
}

func readIndex(dir string) (map[int]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, indexName))
	if os.IsNotExist(err) {
		return map[int]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("relay log: %w", err)
	}
	return parseIndex(b), nil
}

// rewriteIndex replaces the index with the lines of segs only.
func rewriteIndex(dir string, segs []segment) error {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(indexLine(s.seq, s.gtid))
	}
	tmp := filepath.Join(dir, indexName+".new")
	if err := os.WriteFile(tmp, []byte(b.String()), 0o640); err != nil {
		return fmt.Errorf("relay log: %w", err)
	}
	f, err := os.Open(tmp)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("relay log: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, indexName)); err != nil {
		return fmt.Errorf("relay log: %w", err)
	}
	return syncDir(dir)
}
