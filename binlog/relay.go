package binlog

import (
	"encoding/binary"
	"errors"
	"hash/crc32"

	"github.com/go-mysql-org/go-mysql/replication"
)

// A relay log is a replica's copy of its source's binlog: the replica's
// own format description, then the source's rotate (artificial, or the
// source's own when its binlog rotated) and format description, then the
// source's events as the source wrote them, their end positions those of
// the source's binlog.
// MariaDB rotates relay logs inside transactions, even inside statements
// (a rows event whose table map is in the file before), and when the
// replica's I/O thread reconnects, the transaction it was reading is
// sent again whole after the part it had.
//
// prepl replay reads relay logs given in order like binlogs: each of the
// source's events is given its end position in the relay log (and its
// checksum again), so that positions, --start-position and
// --stop-position are the relay log's own offsets, as mariadb-binlog
// prints them ("# at"); a transaction goes on into the next file given
// (assembler.carryRelay); and a transaction sent again replaces its cut
// part (assembler.resent).

// errRelayUnknown: a format description of another server past the
// first, where a relay log's head was not recognised (MariaDB's are: the
// source's rotate or format description right after the replica's own;
// MySQL's put the replica's Previous_gtids between them and are not
// tested).
var errRelayUnknown = errors.New("a second format description event, with another server's positions, in a file that does not " +
	"begin as a MariaDB relay log: a relay log prepl does not read; replay the source's own binlog files, " +
	"or apply it with mysqlbinlog FILE... | mysql")

// relayHead reports whether raw (at least its header), the event after
// a file's format description, written by server id own, says the file
// is a relay log: a binlog goes on with its GTID list, a relay log with
// the source's rotate (artificial, or the source's own, which MariaDB's
// I/O thread writes first in a relay file it opens when the source's
// binlog rotates) or format description, of the source's server id.
func relayHead(raw []byte, own uint32) bool {
	switch replication.EventType(raw[4]) {
	case replication.FORMAT_DESCRIPTION_EVENT, replication.ROTATE_EVENT:
		return serverID(raw) != own
	}
	return false
}

// RelayHead reports whether a file whose first event is the format
// description fde and whose second is next (their headers at least) is
// a relay log: see relayHead.
func RelayHead(fde, next []byte) bool { return relayHead(next, serverID(fde)) }

// serverID is the server id in an event's header.
func serverID(raw []byte) uint32 { return binary.LittleEndian.Uint32(raw[5:]) }

// relocate checks raw, read from a relay log at offset off, and gives it
// the end position it has there, its checksum computed again. A format
// description keeps its own, without the in-use flag the source's binlog
// had while it was copied; a rotate is the source's or the replica's and
// names no position of the relay log either way.
func (g *eventGuard) relocate(raw []byte, off int64) error {
	switch replication.EventType(raw[4]) {
	case replication.FORMAT_DESCRIPTION_EVENT:
		raw[17] &^= logEventBinlogInUse
		return nil
	case replication.ROTATE_EVENT:
		return nil
	}
	end := uint32(off) + uint32(len(raw))
	if binary.LittleEndian.Uint32(raw[13:]) == end {
		return nil
	}
	// The checksum is verified before it is computed again (decode
	// checks the rest; check itself notes table maps, so it runs once).
	if g.crc {
		if len(raw) < replication.EventHeaderSize+replication.BinlogChecksumLength {
			return damaged(replication.EventType(raw[4]), "%d bytes, too short for its checksum", len(raw))
		}
		if crc32.ChecksumIEEE(raw[:len(raw)-4]) != binary.LittleEndian.Uint32(raw[len(raw)-4:]) {
			return damaged(replication.EventType(raw[4]), "checksum mismatch")
		}
	}
	binary.LittleEndian.PutUint32(raw[13:], end)
	if g.crc {
		binary.LittleEndian.PutUint32(raw[len(raw)-4:], crc32.ChecksumIEEE(raw[:len(raw)-4]))
	}
	return nil
}

// inTransaction reports whether an event of type typ is part of a
// transaction after its start: at a relay log's head, the end of one
// begun in the file before.
func inTransaction(typ replication.EventType) bool {
	switch typ {
	case replication.TABLE_MAP_EVENT, replication.XID_EVENT, replication.QUERY_EVENT:
		return true
	}
	return isRows(typ)
}
