// Command gen writes the small binlogs that seed binlog's fuzz targets and
// its damaged-input tests (binlog/testdata/binlog/): one with CRC32
// checksums, one with binlog_checksum=NONE. They are committed; run this
// again only to change them: go run ./binlog/testdata/gen
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	_ "github.com/go-sql-driver/mysql"

	"github.com/prepl/prepl/sandbox"
)

var workload = []string{
	"CREATE DATABASE f",
	`CREATE TABLE f.t (id INT PRIMARY KEY, v VARCHAR(20), n BIGINT UNSIGNED, d DECIMAL(10,2), ts DATETIME(3),
		j JSON, b BLOB, e ENUM('a','b'), s SET('x','y'), bt BIT(5), fl FLOAT, dt DATE, tm TIME(2), y YEAR, u TINYINT UNSIGNED)`,
	`INSERT INTO f.t VALUES (1, 'one', 18446744073709551615, -12.34, '2024-02-29 12:00:00.123', '{"a":[1,"x"]}',
		X'00FF', 'b', 'x,y', b'10101', 1.5, '2024-01-02', '-01:02:03.45', 2024, 255)`,
	"INSERT INTO f.t (id, v) VALUES (2, NULL), (3, 'three')",
	"UPDATE f.t SET v = 'uno', n = 0 WHERE id = 1",
	"BEGIN", "DELETE FROM f.t WHERE id = 2", "INSERT INTO f.t (id, v) VALUES (4, 'four')", "COMMIT",
	"ALTER TABLE f.t ADD COLUMN extra INT",
	"INSERT INTO f.t (id, extra) VALUES (5, 5)",
}

func main() {
	out := filepath.Join("binlog", "testdata", "binlog")
	for _, c := range []struct{ name, checksum string }{{"crc32", "CRC32"}, {"nochecksum", "NONE"}} {
		if err := write(filepath.Join(out, c.name+".000001"), c.checksum); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func write(dst, checksum string) error {
	o := sandbox.Defaults()
	o.Binlog = true
	o.BinlogRowMetadata = "FULL"
	o.Flags = []string{"--binlog-checksum=" + checksum}
	s, err := sandbox.Start(context.Background(), o)
	if err != nil {
		return err
	}
	defer s.Close()
	db, err := s.Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range workload {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if _, err := db.Exec("FLUSH BINARY LOGS"); err != nil {
		return err
	}
	files, err := s.BinlogFiles()
	if err != nil || len(files) == 0 {
		return fmt.Errorf("binlog files: %v %v", files, err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
