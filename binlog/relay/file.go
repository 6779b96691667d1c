package relay

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// A relay file is laid out as a MariaDB replica's relay log, so that
// mariadb-binlog and prepl replay read it: the magic, prepl's own format
// description (the source's, with prepl's server id), the source's
// format description, then an artificial rotate naming the source
// position the file starts at (its entry in the index), then the
// source's events as the source sent them, checksums included, their
// positions those of the source's binlog. A file begins at a
// transaction's start; it may hold a source's rotate, format description
// and GTID list again (a reconnect, the source's next binlog).

const magic = "\xfebin"

// filePrefix names the relay files: relay.000001, relay.000002...
const filePrefix = "relay."

func fileName(seq int) string { return fmt.Sprintf("%s%06d", filePrefix, seq) }

// parseSeq is the sequence number of a relay file's name.
func parseSeq(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, filePrefix)
	if !ok || len(rest) < 6 {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

// listFiles returns the sequence numbers of dir's relay files, in order.
func listFiles(dir string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var seqs []int
	for _, e := range ents {
		if n, ok := parseSeq(e.Name()); ok && e.Type().IsRegular() {
			seqs = append(seqs, n)
		}
	}
	sort.Ints(seqs)
	return seqs, nil
}

// crcOn reports whether fde, a format description event, says its
// binlog's events end with a CRC32.
func crcOn(fde []byte) bool {
	return len(fde) > replication.EventHeaderSize+5 && fde[len(fde)-5] == byte(replication.BINLOG_CHECKSUM_ALG_CRC32)
}

// seal sets ev's size and, when crc, its checksum (its last 4 bytes).
func seal(ev []byte, crc bool) {
	binary.LittleEndian.PutUint32(ev[9:], uint32(len(ev)))
	if crc {
		binary.LittleEndian.PutUint32(ev[len(ev)-4:], crc32.ChecksumIEEE(ev[:len(ev)-4]))
	}
}

// ownFDE is fde with server id own, at the start of a file.
func ownFDE(fde []byte, own uint32) []byte {
	ev := bytes.Clone(fde)
	binary.LittleEndian.PutUint32(ev[5:], own)
	binary.LittleEndian.PutUint32(ev[13:], 4+uint32(len(ev)))
	ev[17] &^= 1 // LOG_EVENT_BINLOG_IN_USE_F: not the source's in-use flag
	seal(ev, crcOn(fde))
	return ev
}

// rotateEvent is an artificial rotate to the source's file at pos,
// written by serverID.
func rotateEvent(at txn.Position, serverID uint32, crc bool) []byte {
	ev := make([]byte, replication.EventHeaderSize, replication.EventHeaderSize+8+len(at.File)+4)
	ev[4] = byte(replication.ROTATE_EVENT)
	binary.LittleEndian.PutUint32(ev[5:], serverID)
	binary.LittleEndian.PutUint16(ev[17:], replication.LOG_EVENT_ARTIFICIAL_F)
	ev = binary.LittleEndian.AppendUint64(ev, uint64(at.Offset))
	ev = append(ev, at.File...)
	if crc {
		ev = append(ev, 0, 0, 0, 0)
	}
	seal(ev, crc)
	return ev
}

// serverID is the server id in an event's header.
func serverID(ev []byte) uint32 { return binary.LittleEndian.Uint32(ev[5:]) }

// artificialRotate reads the source's artificial rotate at the start of
// a replication connection: the file and offset it starts at. Its
// checksum is not one a reader of the file can check (the source sends
// it before its format description, and MariaDB's does not match), so
// the relay log holds it written again (rotateEvent).
func artificialRotate(ev []byte) (txn.Position, bool) {
	if len(ev) < replication.EventHeaderSize+8 || replication.EventType(ev[4]) != replication.ROTATE_EVENT ||
		binary.LittleEndian.Uint16(ev[17:])&replication.LOG_EVENT_ARTIFICIAL_F == 0 {
		return txn.Position{}, false
	}
	body := ev[replication.EventHeaderSize:]
	if len(body) >= 12 && crc32.ChecksumIEEE(ev[:len(ev)-4]) == binary.LittleEndian.Uint32(ev[len(ev)-4:]) {
		body = body[:len(body)-4]
	}
	return txn.Position{File: string(body[8:]), Offset: uint32(binary.LittleEndian.Uint64(body))}, true
}

// head is the beginning of a relay file starting at the source's
// position at, fde the source's format description.
func head(fde []byte, own uint32, at txn.Position) []byte {
	b := []byte(magic)
	b = append(b, ownFDE(fde, own)...)
	b = append(b, fde...)
	return append(b, rotateEvent(at, serverID(fde), crcOn(fde))...)
}

// errTorn is a file that ends inside an event.
var errTorn = errors.New("the file ends inside an event")

// eventReader reads a relay file's events one at a time.
type eventReader struct {
	br  *bufio.Reader
	off int64 // where the next event starts
}

func newEventReader(f io.Reader, off int64) *eventReader {
	return &eventReader{br: bufio.NewReaderSize(f, 256<<10), off: off}
}

// next reads the next event; io.EOF at a clean end, errTorn inside one.
func (er *eventReader) next() ([]byte, error) {
	var h [replication.EventHeaderSize]byte
	n, err := io.ReadFull(er.br, h[:])
	switch {
	case err == io.EOF:
		return nil, io.EOF
	case err == io.ErrUnexpectedEOF:
		return nil, errTorn
	case err != nil:
		return nil, err
	}
	size := binary.LittleEndian.Uint32(h[9:])
	if size < replication.EventHeaderSize || size > 1<<30+1<<20 {
		return nil, fmt.Errorf("event of %d bytes: not an event's length", size)
	}
	ev := make([]byte, size)
	copy(ev, h[:n])
	if _, err := io.ReadFull(er.br, ev[n:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, errTorn
		}
		return nil, err
	}
	er.off += int64(size)
	return ev, nil
}

// readHead reads a relay file's head: the source's format description
// and the position the file starts at, where decoding starts (the
// source's format description, after prepl's own) and where the head
// ends.
func readHead(path string) (fde []byte, start txn.Position, from, end int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, txn.Position{}, 0, 0, err
	}
	defer f.Close()
	var m [4]byte
	if _, err := io.ReadFull(f, m[:]); err != nil || string(m[:]) != magic {
		return nil, txn.Position{}, 0, 0, fmt.Errorf("relay log %s: not a binlog file (no magic number): %w", path, errTorn)
	}
	er := newEventReader(f, 4)
	var evs [3][]byte
	for i := range evs {
		if evs[i], err = er.next(); err != nil {
			return nil, txn.Position{}, 0, 0, fmt.Errorf("relay log %s: head: %w", path, err)
		}
	}
	fde, rot := evs[1], evs[2]
	if replication.EventType(fde[4]) != replication.FORMAT_DESCRIPTION_EVENT || replication.EventType(rot[4]) != replication.ROTATE_EVENT {
		return nil, txn.Position{}, 0, 0, fmt.Errorf("relay log %s: not a file prepl's relay log wrote (its head is not "+
			"format description, format description, rotate)", path)
	}
	body := rot[replication.EventHeaderSize:]
	if crcOn(fde) {
		body = body[:len(body)-4]
	}
	if len(body) < 8 {
		return nil, txn.Position{}, 0, 0, fmt.Errorf("relay log %s: head: rotate event of %d bytes", path, len(rot))
	}
	start = txn.Position{File: string(body[8:]), Offset: uint32(binary.LittleEndian.Uint64(body))}
	return fde, start, 4 + int64(len(evs[0])), er.off, nil
}

// events feeds a decoder with a relay file's source events, as the
// replication stream does: it gives an event sent with LogPos 0 its end
// position (MariaDB 11.4+), as the stream's dump connection does.
type events struct {
	dec    *binlog.Decoder
	flavor txn.Flavor
	pos    binlog.LogPos
}

// add decodes and assembles raw, and returns the transaction it ends.
func (e *events) add(raw []byte) (*txn.Txn, error) {
	ev, err := e.dec.Decode(raw)
	if err != nil {
		return nil, err
	}
	e.pos.Fill(ev, e.flavor)
	return e.dec.Add(ev, len(raw))
}

// scanTail reads the file at path from off (readHead's from), adds the
// GTIDs of its complete transactions to gtid, and
// returns where its last complete transaction ends, in the file and in
// the source's binlog (start, where the file starts, when it holds
// none), and the number of bytes after it: a tail a crash cut, or
// events written but not yet made durable.
func scanTail(path string, off, headEnd int64, start txn.Position, flavor txn.Flavor, lim binlog.Limits, gtid *position.Set) (end int64, endPos txn.Position, torn int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, txn.Position{}, 0, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, txn.Position{}, 0, err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return 0, txn.Position{}, 0, err
	}
	dec := binlog.NewDecoder(lim, nil)
	dec.SetFlavor(flavor)
	e := &events{dec: dec, flavor: flavor}
	end, endPos = headEnd, start
	er := newEventReader(f, off)
	for {
		raw, err := er.next()
		if err != nil {
			break // a clean end, a torn event or a damaged length: the tail goes
		}
		t, err := e.add(raw)
		if err != nil {
			break
		}
		if t != nil {
			end, endPos = er.off, t.End
			gtid.Add(t)
		}
	}
	return end, endPos, size - end, nil
}

func path(dir string, seq int) string { return filepath.Join(dir, fileName(seq)) }
