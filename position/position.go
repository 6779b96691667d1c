// Package position is prepl's one place for replication positions: MariaDB
// GTIDs and GTID positions, MySQL GTID sets, binlog file coordinates and
// the checkpoint a target stores in the same transaction as the rows it
// covers. Every other package parses, orders and compares positions here.
package position

import (
	"strconv"
	"strings"
	"time"

	"github.com/prepl/prepl/txn"
)

// Compare orders binlog coordinates: files by their numeric extension
// (binlog.000009 before binlog.000010), then by offset. Files without a
// numeric extension compare by name.
func Compare(a, b txn.Position) int {
	if a.File != b.File {
		an, aok := fileNumber(a.File)
		bn, bok := fileNumber(b.File)
		if aok && bok && an != bn {
			if an < bn {
				return -1
			}
			return 1
		}
		return strings.Compare(a.File, b.File)
	}
	switch {
	case a.Offset < b.Offset:
		return -1
	case a.Offset > b.Offset:
		return 1
	}
	return 0
}

// Less reports whether file:pos a comes before file:pos b (see Compare).
func Less(fileA string, posA uint32, fileB string, posB uint32) bool {
	return Compare(txn.Position{File: fileA, Offset: posA}, txn.Position{File: fileB, Offset: posB}) < 0
}

func fileNumber(name string) (uint64, bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(name[i+1:], 10, 64)
	return n, err == nil
}

// Checkpoint is what a target stores for one slot of a stream, in the same
// transaction as the rows it covers (see package apply for slots).
type Checkpoint struct {
	Slot     string
	GTIDPos  string // MariaDB gtid_slave_pos form, or MySQL executed set
	File     string // binlog file base name
	Pos      uint32 // offset just past the last applied transaction
	LastGTID string
	SourceTS time.Time
	// PendingDDL is the GTID or file:pos of a DDL started but maybe not
	// finished; PendingState is the target's state before it ran, which a
	// restart compares to know whether the DDL took effect.
	PendingDDL   string
	PendingState string
	Applied      uint64 // transactions applied through this slot, all runs
	// Floor is what was committed without a gap when this row was written:
	// every transaction at or before it is applied, whatever its slot.
	// Slots commit out of order between them (modes schema and domain);
	// a restart reads from the highest floor and skips, above it, what
	// each slot's own checkpoint covers.
	Floor Floor
}

// Floor is a gapless applied position.
type Floor struct {
	GTIDPos string
	File    string
	Pos     uint32
}
