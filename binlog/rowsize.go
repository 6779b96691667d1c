package binlog

import (
	"errors"

	"github.com/go-mysql-org/go-mysql/replication"
)

// Row counts for the event guard. decodedRowsBytes bounds what decoding a
// rows event allocates by the most rows its bytes could hold (rows of
// nothing but null bitmaps), which is right for a damaged event and far
// too much for a real one that holds one big row: a 12 MiB BLOB in a
// table of three columns could be 12 million rows of NULLs, 11 GiB
// decoded. When that bound is over the limit, the guard counts the rows
// instead, stepping over the images by the encoded sizes of their values
// (skipImage, fieldSize: nothing decoded), with the column types of the
// table map.

// countRows counts the row images in data (a rows event's rows, after the
// column bitmaps), images per row (2 for updates), for table map tm; an
// error when an image runs past the end or a type cannot be sized.
func countRows(tm *replication.TableMapEvent, bitmap1, bitmap2 []byte, images int, data []byte) (int, error) {
	n := len(tm.ColumnType)
	if len(tm.ColumnMeta) != n {
		return 0, errors.New("table map: column types and metadata differ in number")
	}
	rows := 0
	for pos := 0; pos < len(data); rows++ {
		for i := range images {
			bitmap := bitmap1
			if i == 1 {
				bitmap = bitmap2
			}
			var err error
			if pos, err = skipImage(tm, n, bitmap, data, pos, nil); err != nil {
				return 0, err
			}
		}
	}
	return rows, nil
}
