package apply

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/prepl/prepl/depend"
)

// markedTarget is a memTarget that marks unit first as maybe applied, as
// a MySQL target marks a unit that wrote non-transactional tables.
type markedTarget struct {
	*memTarget
	first string
}

func (t markedTarget) MaybeApplied(context.Context) (string, error) { return t.first, nil }

// TestPendingDDLNamesMarkedUnit: --pending-ddl may name the stored pending
// DDL or the unit the target marks as maybe applied (Target.MaybeApplied);
// any other name is warned about and ignored. A target whose tables are
// all transactional answers "" (memTarget, PostgreSQL): the name is
// ignored there.
func TestPendingDDLNamesMarkedUnit(t *testing.T) {
	const id = "0-1-3"
	for _, tc := range []struct {
		name string
		tgt  Target
		warn bool
	}{
		{"nothing marked", newMemTarget(), true},
		{"the unit marked", markedTarget{newMemTarget(), id}, false},
		{"another unit marked", markedTarget{newMemTarget(), "0-1-4"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, nil))
			w := wl(7, 20, 10)
			_, err := runOn(t, tc.tgt, w.txs, Resume{}, Config{Mode: depend.Writeset, Workers: 2, Log: log,
				ResolveDDL: ResolveDDL{ID: id, As: DDLApplied}})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(buf.String(), "--pending-ddl ignored"); got != tc.warn {
				t.Fatalf("warned %v, want %v; log:\n%s", got, tc.warn, buf.String())
			}
		})
	}
}
