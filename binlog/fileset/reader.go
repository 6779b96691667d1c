package fileset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/internal/readahead"
	"github.com/prepl/prepl/txn"
)

// Options say where to start reading binlog files.
type Options struct {
	// StartFile is the base name of the file to start in; earlier files
	// are skipped. "" starts with the first file.
	StartFile string
	// StartOffset is where to start in StartFile (the End offset of the
	// last transaction applied); 0 or 4 is the beginning.
	StartOffset uint32
	// Limits bound the size of an event and of a transaction.
	Limits binlog.Limits
	// ReadAheadBytes bounds the transactions parsed and not yet returned
	// by Next, by their size in memory (txn.Txn.Footprint); 0 means
	// DefaultReadAheadBytes. A bigger transaction is parsed alone.
	ReadAheadBytes int64
	// Skip, when set, says whether to leave out a transaction that cannot
	// be applied (a partial JSON update without its before image) instead
	// of stopping there: it is then returned with no changes.
	Skip func(gtid string, start txn.Position) bool
}

// Reader reads transactions from binlog files on disk, in the order
// given. It decodes in a goroutine (internal/readahead), up to
// ReadAheadBytes of transactions ahead of Next, so memory stays bounded
// whatever the file and transaction sizes.
type Reader struct {
	rd  *readahead.Reader
	dec *binlog.Decoder
}

var _ binlog.Reader = (*Reader)(nil)

// DefaultReadAheadBytes is Options.ReadAheadBytes's default.
const DefaultReadAheadBytes = readahead.DefaultBytes

// Open starts reading paths. Errors about the files themselves come
// from Next, after every transaction that precedes them.
func Open(paths []string, opt Options) (*Reader, error) {
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
	if opt.ReadAheadBytes <= 0 {
		opt.ReadAheadBytes = DefaultReadAheadBytes
	}
	r := &Reader{dec: binlog.NewDecoder(opt.Limits, opt.Skip)}
	paths = paths[first:]
	r.rd = readahead.Start(func(ctx context.Context, emit func(*txn.Txn) bool) error {
		return decodeFiles(ctx, r.dec, paths, opt.StartOffset, emit)
	}, opt.ReadAheadBytes, nil)
	return r, nil
}

// Flavor is the flavor of the server that wrote the files, known once the
// first event has been read ("" before).
func (r *Reader) Flavor() txn.Flavor { return r.dec.Flavor() }

// Next returns the next complete transaction; io.EOF after the last one;
// a *binlog.FormatError when the files are damaged, incomplete or not
// row-based.
func (r *Reader) Next(ctx context.Context) (*txn.Txn, error) { return r.rd.Next(ctx) }

// ReadAhead is the reader's read-ahead, for a consumer that takes its
// batches instead of calling Next (the apply engine).
func (r *Reader) ReadAhead() *readahead.Reader { return r.rd }

// AtHand is false: the engine takes the read-ahead's batches as they
// come (apply.Source).
func (r *Reader) AtHand() bool { return false }

// Silence is 0: files are never late (apply.Source).
func (r *Reader) Silence() time.Duration { return 0 }

// Close stops the decoding goroutine and waits for it.
func (r *Reader) Close() error {
	r.rd.Close(binlog.ErrClosed)
	return nil
}

// decodeFiles decodes paths with dec, from offset in the first, and
// emits their transactions; nil at the end of the last file.
func decodeFiles(ctx context.Context, dec *binlog.Decoder, paths []string, offset uint32, emit func(*txn.Txn) bool) error {
	for i, path := range paths {
		start := uint32(4)
		if i == 0 && offset > 4 {
			start = offset
		}
		err := decodeFile(ctx, dec, path, start, emit)
		if errors.Is(err, binlog.ErrClosed) {
			return err
		}
		next := ""
		if i+1 < len(paths) {
			next = filepath.Base(paths[i+1])
		}
		if err = dec.EndFile(err, next); err != nil {
			return err
		}
	}
	return nil
}

// decodeFile feeds one file's events to dec and sends its transactions.
func decodeFile(ctx context.Context, dec *binlog.Decoder, path string, start uint32, send func(*txn.Txn) bool) error {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return &binlog.FormatError{File: name, Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return &binlog.FormatError{File: name, Err: err}
	}
	return dec.DecodeFile(ctx, name, f, st.Size(), start, send)
}
