package binlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/txn"
)

// FileOptions say where to start reading binlog files.
type FileOptions struct {
	// StartFile is the base name of the file to start in; earlier files
	// are skipped. "" starts with the first file.
	StartFile string
	// StartOffset is where to start in StartFile (the End offset of the
	// last transaction applied); 0 or 4 is the beginning.
	StartOffset uint32
}

// FileReader reads transactions from binlog files on disk, in the order
// given. It parses in a goroutine, a bounded number of transactions ahead
// of Next, so memory stays bounded whatever the file sizes.
type FileReader struct {
	out    chan fileResult
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	flavor txn.Flavor
	err    error // sticky: returned by every Next after the last txn
}

type fileResult struct {
	t   *txn.Txn
	err error
}

// readAhead is how many complete transactions the parser may run ahead.
const readAhead = 64

var errStopped = errors.New("binlog reader closed")

var errNotBinlog = errors.New("not a binlog file (no binlog magic number and format description event)")

// OpenFiles starts reading paths. Errors about the files themselves come
// from Next, after every transaction that precedes them.
func OpenFiles(paths []string, opt FileOptions) (*FileReader, error) {
	if len(paths) == 0 {
		return nil, errors.New("binlog: no files to read")
	}
	first := 0
	if opt.StartFile != "" {
		first = -1
		for i, p := range paths {
			if filepath.Base(p) == opt.StartFile {
				first = i
				break
			}
		}
		if first < 0 {
			return nil, fmt.Errorf("binlog: start file %s is not among the files given", opt.StartFile)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &FileReader{out: make(chan fileResult, readAhead), cancel: cancel, done: make(chan struct{})}
	go r.run(ctx, paths[first:], opt.StartOffset)
	return r, nil
}

// Flavor is the flavor of the server that wrote the files, known once the
// first event has been read ("" before).
func (r *FileReader) Flavor() txn.Flavor {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flavor
}

// Next returns the next complete transaction; io.EOF after the last one;
// a *FormatError when the files are damaged, incomplete or not row-based.
func (r *FileReader) Next(ctx context.Context) (*txn.Txn, error) {
	if r.err != nil {
		return nil, r.err
	}
	select {
	case res, ok := <-r.out:
		if !ok {
			r.err = io.EOF
			return nil, io.EOF
		}
		if res.err != nil {
			r.err = res.err
			return nil, res.err
		}
		return res.t, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops the parser goroutine and waits for it.
func (r *FileReader) Close() error {
	r.cancel()
	<-r.done
	if r.err == nil {
		r.err = errStopped
	}
	return nil
}

func (r *FileReader) run(ctx context.Context, paths []string, offset uint32) {
	defer close(r.done)
	defer close(r.out)
	asm := newAssembler()
	send := func(res fileResult) bool {
		select {
		case r.out <- res:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for i, path := range paths {
		start := uint32(4)
		if i == 0 && offset > 4 {
			start = offset
		}
		err := r.parseFile(ctx, asm, path, start, send)
		if errors.Is(err, errStopped) {
			return
		}
		if err == nil && asm.open() {
			cause := errors.New("transaction has no commit before the end of the file")
			if i == len(paths)-1 {
				cause = ErrIncomplete
			}
			err = &FormatError{File: asm.file, Offset: asm.cur.Start.Offset, Err: cause}
		}
		if err != nil {
			send(fileResult{err: err})
			return
		}
	}
}

// parseFile feeds one file's events to asm and sends its transactions.
func (r *FileReader) parseFile(ctx context.Context, asm *assembler, path string, start uint32, send func(fileResult) bool) (err error) {
	name := filepath.Base(path)
	asm.setFile(name)
	good := start // end of the last event read without error
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(true)
	p.SetParseTime(false)
	p.SetTimestampStringLocation(time.UTC)
	p.SetUseDecimal(false)
	p.SetRenderJSONAsMySQLText(true)
	var cbErr error
	onEvent := func(ev *replication.BinlogEvent) error {
		if ctx.Err() != nil {
			cbErr = errStopped
			return cbErr
		}
		if ev.Header.EventType == replication.FORMAT_DESCRIPTION_EVENT && start > 4 {
			// The file's format description is read first, wherever we start.
			_, err := asm.add(ev)
			return err
		}
		t, err := asm.add(ev)
		if err != nil {
			cbErr = err
			return err
		}
		if ev.Header.LogPos != 0 {
			good = ev.Header.LogPos
		}
		r.noteFlavor(asm.flavor)
		if t != nil && !send(fileResult{t: t}) {
			cbErr = errStopped
			return cbErr
		}
		return nil
	}
	defer func() {
		if v := recover(); v != nil { // go-mysql indexes into event bodies it has not bounds-checked
			err = &FormatError{File: name, Offset: good, Err: fmt.Errorf("corrupted event: %v", v)}
		}
	}()
	perr := parseFrom(p, path, start, onEvent)
	if cbErr != nil {
		return cbErr
	}
	if perr != nil {
		return &FormatError{File: name, Offset: good, Err: classifyParseError(perr)}
	}
	return nil
}

func (r *FileReader) noteFlavor(f txn.Flavor) {
	if f == "" {
		return
	}
	r.mu.Lock()
	r.flavor = f
	r.mu.Unlock()
}

// classifyParseError names what go-mysql's parser ran into, keeping its
// message but not the event bytes it may carry.
func classifyParseError(err error) error {
	var ee *replication.EventError
	if errors.As(err, &ee) {
		return fmt.Errorf("corrupted %v event: %s", ee.Header.EventType, ee.Err)
	}
	msg := err.Error()
	switch {
	case errors.Is(err, errNotBinlog):
		return errNotBinlog
	case strings.Contains(msg, "get event"), strings.Contains(msg, "EOF"):
		return fmt.Errorf("truncated event: %s", msg)
	case strings.Contains(msg, "checksum"):
		return fmt.Errorf("corrupted event (checksum mismatch): %s", msg)
	}
	return fmt.Errorf("corrupted event: %s", msg)
}

// logEventBinlogInUse is LOG_EVENT_BINLOG_IN_USE_F, set in the format
// description event's header while the server has the file open.
const logEventBinlogInUse = 0x1

// parseFrom does what go-mysql's ParseFile does (format description event
// first, then the events from start), except that it clears the in-use
// flag of the format description before checking its checksum, as the
// server does: the server computes that checksum without the flag, so the
// file being written would otherwise fail verification.
func parseFrom(p *replication.BinlogParser, path string, start uint32, onEvent replication.OnEventFunc) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	magic := make([]byte, 4)
	if _, err := io.ReadFull(br, magic); err != nil || !bytes.Equal(magic, replication.BinLogFileHeader) {
		return errNotBinlog
	}
	hdr, err := br.Peek(replication.EventHeaderSize)
	if err != nil {
		return fmt.Errorf("get event header err %w", err)
	}
	if replication.EventType(hdr[4]) != replication.FORMAT_DESCRIPTION_EVENT {
		return errNotBinlog
	}
	size := binary.LittleEndian.Uint32(hdr[9:])
	if size < replication.EventHeaderSize || size > 1<<20 {
		return errNotBinlog
	}
	fde := make([]byte, size)
	if _, err := io.ReadFull(br, fde); err != nil {
		return fmt.Errorf("get event err %w", err)
	}
	fde[17] &^= logEventBinlogInUse
	if _, err := p.ParseSingleEvent(bytes.NewReader(fde), onEvent); err != nil {
		return err
	}
	if start > 4+size {
		if _, err := f.Seek(int64(start), io.SeekStart); err != nil {
			return err
		}
		br.Reset(f)
	} else if start != 4 && start != 4+size {
		return fmt.Errorf("start offset %d is inside the format description event", start)
	}
	return p.ParseReader(br, onEvent)
}
