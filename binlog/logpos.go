package binlog

import (
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// LogPos follows where the next event of a stream starts, for a MariaDB
// event sent with LogPos 0 (MariaDB 11.4+ sends some so): its end is
// Next plus its size, as go-mysql's FillZeroLogPos gives it. The live
// stream's dump connection and the relay log's reader both read such
// events.
type LogPos struct {
	Next uint32
}

// Fill gives ev its end position when the source left it 0 (not an
// artificial event), and follows where the next event starts.
func (p *LogPos) Fill(ev *replication.BinlogEvent, flavor txn.Flavor) {
	h := ev.Header
	switch {
	case h.LogPos > 0:
		p.Next = h.LogPos
	case flavor == txn.MariaDB && h.Flags&replication.LOG_EVENT_ARTIFICIAL_F == 0:
		h.LogPos = p.Next + h.EventSize
		p.Next = h.LogPos
	}
	if r, ok := ev.Event.(*replication.RotateEvent); ok {
		p.Next = uint32(r.Position)
	}
}
