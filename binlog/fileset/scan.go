package fileset

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/txn"
)

// maxScanEvent bounds the size of an event ScanFile reads whole: only
// format description, GTID, GTID list and rotate events are read, and
// none of them comes near it; a bigger size is a damaged header.
const maxScanEvent = 1 << 20

// ScanFile reads what CheckContinuity needs from one binlog file: its
// format description, GTID list (Gtid_list, Previous_gtids), GTID events
// and the rotate that ends it. Every other event is skipped by the length
// in its header, never decoded, so a scan costs about a sequential read of
// the file. Damage does not make an error: it is recorded in
// FileSummary.Damaged, and what was read before it is kept.
func ScanFile(path string) (FileSummary, error) { return ScanFileFor(path, nil) }

// ScanFileFor is ScanFile, also calling gtid with every GTID the file
// holds, in file order, in the text form of txn.Txn.GTID. A nil gtid
// formats none (a 10 GB binlog holds millions).
func ScanFileFor(path string, gtid func(string)) (FileSummary, error) {
	s := FileSummary{Name: filepath.Base(path)}
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	sc := scanner{sum: &s, dec: binlog.NewDecoder(binlog.Limits{}, nil), gtid: gtid}
	if err := sc.run(bufio.NewReaderSize(f, 1<<20)); err != nil {
		s.Damaged = err
	}
	s.End = sc.off
	if s.Flavor == txn.MariaDB && s.MariaDBStart == nil {
		s.MariaDBStart = newMariaDBState()
	}
	if s.MariaDBStart != nil && s.MariaDBEnd == nil {
		s.MariaDBEnd = s.MariaDBStart.clone()
	}
	return s, nil
}

type scanner struct {
	sum  *FileSummary
	gtid func(string)    // called with each GTID, when not nil
	dec  *binlog.Decoder // checks each event before go-mysql decodes it
	off  uint32          // where the next event starts
	fde  []byte          // the header of the first format description
	buf  []byte
}

func (sc *scanner) damaged(err error) error {
	return &binlog.FormatError{File: sc.sum.Name, Offset: sc.off, Err: err}
}

func (sc *scanner) run(br *bufio.Reader) error {
	magic := make([]byte, 4)
	if _, err := io.ReadFull(br, magic); err != nil || !bytes.Equal(magic, replication.BinLogFileHeader) {
		return sc.damaged(binlog.ErrNotBinlog)
	}
	sc.off = 4
	hdr := make([]byte, replication.EventHeaderSize)
	for i := 0; ; i++ {
		first := i == 0
		if _, err := io.ReadFull(br, hdr); err == io.EOF {
			return nil
		} else if err != nil {
			return sc.damaged(errors.New("truncated event header"))
		}
		typ := replication.EventType(hdr[4])
		size := binary.LittleEndian.Uint32(hdr[9:])
		if first && (typ != replication.FORMAT_DESCRIPTION_EVENT || size > maxScanEvent) {
			return sc.damaged(binlog.ErrNotBinlog)
		}
		if size < replication.EventHeaderSize {
			return sc.damaged(fmt.Errorf("event size %d is smaller than its header", size))
		}
		if first {
			sc.fde = bytes.Clone(hdr)
		}
		if i == 1 && binlog.RelayHead(sc.fde, hdr) {
			sc.sum.Relay = true
		}
		body := int(size) - replication.EventHeaderSize
		if !scanned(typ) {
			if n, err := br.Discard(body); err != nil {
				return sc.damaged(fmt.Errorf("truncated %v event: %d of %d bytes", typ, n+replication.EventHeaderSize, size))
			}
		} else {
			if size > maxScanEvent {
				return sc.damaged(fmt.Errorf("%v event of %d bytes", typ, size))
			}
			sc.buf = append(sc.buf[:0], hdr...)
			sc.buf = append(sc.buf, make([]byte, body)...)
			if _, err := io.ReadFull(br, sc.buf[replication.EventHeaderSize:]); err != nil {
				return sc.damaged(fmt.Errorf("truncated %v event", typ))
			}
			if first {
				binlog.ClearInUse(sc.buf)
			}
			if err := sc.event(); err != nil {
				return sc.damaged(err)
			}
		}
		if typ != replication.ROTATE_EVENT {
			sc.sum.Rotate = "" // a rotate names the next file only as the last event
		}
		sc.off += size
	}
}

func scanned(t replication.EventType) bool {
	switch t {
	case replication.FORMAT_DESCRIPTION_EVENT, replication.ROTATE_EVENT,
		replication.MARIADB_GTID_EVENT, replication.MARIADB_GTID_LIST_EVENT,
		replication.GTID_EVENT, replication.ANONYMOUS_GTID_EVENT, replication.PREVIOUS_GTIDS_EVENT,
		replication.GTID_TAGGED_LOG_EVENT:
		return true
	}
	return false
}

func (sc *scanner) event() error {
	ev, err := sc.dec.Decode(sc.buf)
	if err != nil {
		return err
	}
	s := sc.sum
	switch e := ev.Event.(type) {
	case *replication.FormatDescriptionEvent:
		s.Flavor = binlog.FlavorOfVersion(e.ServerVersion)
	case *replication.MariadbGTIDListEvent:
		if s.MariaDBStart != nil || s.Relay {
			return nil // only the one that opens the file is its start
		}
		s.Flavor, s.HasGTIDList = txn.MariaDB, true
		s.MariaDBStart = newMariaDBState()
		for _, g := range e.GTIDs {
			s.MariaDBStart.add(position.MariaGTID{Domain: g.DomainID, Server: g.ServerID, Seq: g.SequenceNumber})
		}
	case *replication.MariadbGTIDEvent:
		s.Flavor = txn.MariaDB
		if s.MariaDBStart == nil {
			s.MariaDBStart = newMariaDBState()
		}
		if s.MariaDBEnd == nil {
			s.MariaDBEnd, s.MariaDBFirst = s.MariaDBStart.clone(), map[uint32]position.MariaGTID{}
		}
		g := position.MariaGTID{Domain: e.GTID.DomainID, Server: e.GTID.ServerID, Seq: e.GTID.SequenceNumber}
		if sc.gtid != nil {
			sc.gtid(g.String())
		}
		s.MariaDBEnd.add(g)
		if _, ok := s.MariaDBFirst[g.Domain]; !ok {
			s.MariaDBFirst[g.Domain] = g
		}
	case *replication.PreviousGTIDsEvent:
		if s.HasGTIDList || s.Relay {
			return nil
		}
		set, err := position.ParseMySQLSet(e.GTIDSets)
		if err != nil {
			return fmt.Errorf("previous GTIDs event: %w", err)
		}
		s.HasGTIDList, s.MySQLStart = true, set
	case *replication.GtidTaggedLogEvent:
		sc.mysqlGTID(&e.GTIDEvent)
	case *replication.GTIDEvent:
		sc.mysqlGTID(e)
	case *replication.RotateEvent:
		s.Rotate = string(e.NextLogName)
	}
	return nil
}

// mysqlGTID counts a MySQL GTID event: anonymous, plain or tagged.
func (sc *scanner) mysqlGTID(e *replication.GTIDEvent) {
	s := sc.sum
	{
		u, err := uuid.FromBytes(e.SID)
		if err != nil || u == uuid.Nil {
			s.Anonymous++
			return
		}
		if s.MySQLHeld == nil {
			s.MySQLHeld = position.MySQLSet{}
		}
		key := u.String()
		if t := e.Tag.String(); t != "" {
			key += ":" + t
		}
		s.MySQLHeld.Add(key, uint64(e.GNO))
		if sc.gtid != nil {
			sc.gtid(fmt.Sprintf("%s:%d", key, e.GNO))
		}
	}
}
