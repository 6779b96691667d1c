package srcpos

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prepl/prepl/sandbox"
)

// TestAgainstMariaDB: a server with its binlog on says its file, position
// and GTIDs, which move with a transaction; one without says ErrNoBinlog.
func TestAgainstMariaDB(t *testing.T) {
	ctx := context.Background()
	o := sandbox.Defaults()
	o.Binlog = true
	db := sandbox.MustOpen(t, sandbox.MustStart(t, o), "")
	if m, err := IsMariaDB(ctx, db); err != nil || !m {
		t.Fatalf("IsMariaDB: %v %v", m, err)
	}
	file, pos, err := FilePos(ctx, db)
	if err != nil || !strings.HasPrefix(file, "binlog.") || pos < 4 {
		t.Fatalf("FilePos: %q %d %v", file, pos, err)
	}
	sandbox.MustExec(t, db, "CREATE DATABASE p")
	file2, pos2, err := FilePos(ctx, db)
	if err != nil || file2 != file || pos2 <= pos {
		t.Fatalf("FilePos after a DDL: %q %d %v, before %q %d", file2, pos2, err, file, pos)
	}
	g, err := GTIDs(ctx, db, true)
	if err != nil || !strings.HasPrefix(g, "0-1-") {
		t.Fatalf("GTIDs: %q %v", g, err)
	}
	if _, err := GTIDs(ctx, db, false); err == nil {
		t.Fatal("GTIDs as MySQL's gtid_executed on MariaDB: no error")
	}
	off := sandbox.MustOpen(t, sandbox.MustStart(t, sandbox.Defaults()), "")
	if _, _, err := FilePos(ctx, off); !errors.Is(err, ErrNoBinlog) {
		t.Fatalf("FilePos without a binlog: %v, want ErrNoBinlog", err)
	}
}
