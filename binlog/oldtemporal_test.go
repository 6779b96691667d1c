package binlog

import (
	"encoding/hex"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestDecodeOldTemporal: values of MariaDB's pre-10.1 temporal format at
// every precision, as MariaDB 10.11 logged them for a table created with
// mysql56_temporal_format=OFF (bytes cut from the rows event by the
// sizes of Type_handler_*::hires_bytes, which add up to the event's), and
// the text the same server gave for them (SELECT with time_zone
// '+00:00'; mariadb-binlog -v cannot print these events). Negative and
// extreme TIMEs, zero dates, dates with zero parts.
func TestDecodeOldTemporal(t *testing.T) {
	for _, c := range []struct {
		typ  byte
		fsp  int
		hex  string
		want string
	}{
		{txn.TypeTime, 0, "8e8e01", "10:20:30"},
		{txn.TypeTime, 1, "01d28eb1", "10:20:30.5"},
		{txn.TypeTime, 2, "123992d1", "10:20:30.25"},
		{txn.TypeTime, 3, "00b63fbbad", "10:20:30.125"},
		{txn.TypeTime, 4, "071e7d5251", "10:20:30.0625"},
		{txn.TypeTime, 5, "4730e52af5", "10:20:30.03125"},
		{txn.TypeTime, 6, "02c7e8f37089", "10:20:30.015625"},
		{txn.TypeDatetime, 0, "fa4a0bfd32120000", "2001-02-03 04:05:06"},
		{txn.TypeDatetime, 1, "00a7778feb7b", "2001-02-03 04:05:06.7"},
		{txn.TypeDatetime, 2, "068aab9f32d6", "2001-02-03 04:05:06.78"},
		{txn.TypeDatetime, 3, "00416ab437fc65", "2001-02-03 04:05:06.789"},
		{txn.TypeDatetime, 4, "028e2b0a2fdbf3", "2001-02-03 04:05:06.7891"},
		{txn.TypeDatetime, 5, "198dae65de9780", "2001-02-03 04:05:06.78912"},
		{txn.TypeDatetime, 6, "00ff88cffab1eb03", "2001-02-03 04:05:06.789123"},
		{txn.TypeTimestamp, 0, "72837b3a", "2001-02-03 04:05:06"},
		{txn.TypeTimestamp, 1, "3a7b837201", "2001-02-03 04:05:06.1"},
		{txn.TypeTimestamp, 2, "3a7b83720c", "2001-02-03 04:05:06.12"},
		{txn.TypeTimestamp, 3, "3a7b8372007b", "2001-02-03 04:05:06.123"},
		{txn.TypeTimestamp, 4, "3a7b837204d2", "2001-02-03 04:05:06.1234"},
		{txn.TypeTimestamp, 5, "3a7b8372003039", "2001-02-03 04:05:06.12345"},
		{txn.TypeTimestamp, 6, "3a7b837201e240", "2001-02-03 04:05:06.123456"},
		{txn.TypeTime, 0, "590a80", "-838:59:59"},
		{txn.TypeTime, 1, "0000000b", "-838:59:58.9"},
		{txn.TypeTime, 2, "00000065", "-838:59:58.99"},
		{txn.TypeTime, 3, "00000003e9", "-838:59:58.999"},
		{txn.TypeTime, 4, "0000002711", "-838:59:58.9999"},
		{txn.TypeTime, 5, "00000186a1", "-838:59:58.99999"},
		{txn.TypeTime, 6, "0000000f4241", "-838:59:58.999999"},
		{txn.TypeDatetime, 0, "40c3775418090000", "1000-01-01 00:00:00"},
		{txn.TypeDatetime, 1, "0053b10a0f01", "1000-01-01 00:00:00.1"},
		{txn.TypeDatetime, 2, "0344ea649601", "1000-01-01 00:00:00.01"},
		{txn.TypeDatetime, 3, "0020b127eddc01", "1000-01-01 00:00:00.001"},
		{txn.TypeDatetime, 4, "0146eb8f4a9801", "1000-01-01 00:00:00.0001"},
		{txn.TypeDatetime, 5, "0cc53398e9f001", "1000-01-01 00:00:00.00001"},
		{txn.TypeDatetime, 6, "007fb403f9236001", "1000-01-01 00:00:00.000001"},
		{txn.TypeTimestamp, 0, "01000000", "1970-01-01 00:00:01"},
		{txn.TypeTimestamp, 1, "0000000101", "1970-01-01 00:00:01.1"},
		{txn.TypeTimestamp, 2, "0000000101", "1970-01-01 00:00:01.01"},
		{txn.TypeTimestamp, 3, "000000010001", "1970-01-01 00:00:01.001"},
		{txn.TypeTimestamp, 4, "000000010001", "1970-01-01 00:00:01.0001"},
		{txn.TypeTimestamp, 5, "00000001000001", "1970-01-01 00:00:01.00001"},
		{txn.TypeTimestamp, 6, "00000001000001", "1970-01-01 00:00:01.000001"},
		{txn.TypeTime, 0, "a7f57f", "838:59:59"},
		{txn.TypeTime, 1, "0399c0bf", "838:59:59.9"},
		{txn.TypeTime, 2, "2401877f", "838:59:59.99"},
		{txn.TypeTime, 3, "01680f4aff", "838:59:59.999"},
		{txn.TypeTime, 4, "0e1098edff", "838:59:59.9999"},
		{txn.TypeTime, 5, "8ca5f94bff", "838:59:59.99999"},
		{txn.TypeTime, 6, "057e7bbcf7ff", "838:59:59.999999"},
		{txn.TypeDatetime, 0, "7787d105f15a0000", "9999-12-31 23:59:59"},
		{txn.TypeDatetime, 1, "0344d965ffff", "9999-12-31 23:59:59.9"},
		{txn.TypeDatetime, 2, "20b07dfbffff", "9999-12-31 23:59:59.99"},
		{txn.TypeDatetime, 3, "0146e4ebd7ffff", "9999-12-31 23:59:59.999"},
		{txn.TypeDatetime, 4, "0cc4f1366fffff", "9999-12-31 23:59:59.9999"},
		{txn.TypeDatetime, 5, "7fb16c205fffff", "9999-12-31 23:59:59.99999"},
		{txn.TypeDatetime, 6, "04fcee3943bfffff", "9999-12-31 23:59:59.999999"},
		{txn.TypeTimestamp, 0, "ffffff7f", "2038-01-19 03:14:07"},
		{txn.TypeTimestamp, 1, "7fffffff09", "2038-01-19 03:14:07.9"},
		{txn.TypeTimestamp, 2, "7fffffff63", "2038-01-19 03:14:07.99"},
		{txn.TypeTimestamp, 3, "7fffffff03e7", "2038-01-19 03:14:07.999"},
		{txn.TypeTimestamp, 4, "7fffffff270f", "2038-01-19 03:14:07.9999"},
		{txn.TypeTimestamp, 5, "7fffffff01869f", "2038-01-19 03:14:07.99999"},
		{txn.TypeTimestamp, 6, "7fffffff0f423f", "2038-01-19 03:14:07.999999"},
		{txn.TypeTime, 0, "ffffff", "-00:00:01"},
		{txn.TypeTime, 1, "01cce05f", "-00:00:00.1"},
		{txn.TypeTime, 2, "1200c3bf", "-00:00:00.01"},
		{txn.TypeTime, 3, "00b407a57f", "-00:00:00.001"},
		{txn.TypeTime, 4, "07084c76ff", "-00:00:00.0001"},
		{txn.TypeTime, 5, "4652fca5ff", "-00:00:00.00001"},
		{txn.TypeTime, 6, "02bf3dde7bff", "-00:00:00.000001"},
		{txn.TypeDatetime, 0, "0000000000000000", "0000-00-00 00:00:00"},
		{txn.TypeDatetime, 1, "000000000000", "0000-00-00 00:00:00.0"},
		{txn.TypeDatetime, 2, "000000000000", "0000-00-00 00:00:00.00"},
		{txn.TypeDatetime, 3, "00000000000000", "0000-00-00 00:00:00.000"},
		{txn.TypeDatetime, 4, "00000000000000", "0000-00-00 00:00:00.0000"},
		{txn.TypeDatetime, 5, "00000000000000", "0000-00-00 00:00:00.00000"},
		{txn.TypeDatetime, 6, "0000000000000000", "0000-00-00 00:00:00.000000"},
		{txn.TypeTimestamp, 0, "00000000", "0000-00-00 00:00:00"},
		{txn.TypeTimestamp, 1, "0000000000", "0000-00-00 00:00:00.0"},
		{txn.TypeTimestamp, 2, "0000000000", "0000-00-00 00:00:00.00"},
		{txn.TypeTimestamp, 3, "000000000000", "0000-00-00 00:00:00.000"},
		{txn.TypeTimestamp, 4, "000000000000", "0000-00-00 00:00:00.0000"},
		{txn.TypeTimestamp, 5, "00000000000000", "0000-00-00 00:00:00.00000"},
		{txn.TypeTimestamp, 6, "00000000000000", "0000-00-00 00:00:00.000000"},
		{txn.TypeTime, 0, "000000", "00:00:00"},
		{txn.TypeTime, 1, "01cce060", "00:00:00.0"},
		{txn.TypeTime, 2, "1200c38e", "-00:00:00.50"},
		{txn.TypeTime, 3, "00c97cd174", "100:00:00.500"},
		{txn.TypeTime, 4, "0631b8bf78", "-100:00:00.5000"},
		{txn.TypeTime, 5, "4855f895ff", "23:59:59.99999"},
		{txn.TypeTime, 6, "02ab20071c01", "-23:59:59.999999"},
		{txn.TypeDatetime, 0, "80c5aa8b68120000", "2024-02-29 12:34:56"},
		{txn.TypeDatetime, 1, "00a965a7fc65", "2024-02-29 12:34:56.5"},
		{txn.TypeDatetime, 2, "069dc8660005", "2024-00-00 00:00:00.05"},
		{txn.TypeDatetime, 3, "00422b20462985", "2024-02-00 12:34:56.005"},
		{txn.TypeDatetime, 4, "0295b51831d705", "2024-02-29 12:34:56.0005"},
		{txn.TypeDatetime, 5, "19d912f1f26605", "2024-02-29 12:34:56.00005"},
		{txn.TypeDatetime, 6, "01027abd7377fc05", "2024-02-29 12:34:56.000005"},
		{txn.TypeTimestamp, 0, "f079e065", "2024-02-29 12:34:56"},
		{txn.TypeTimestamp, 1, "65e079f005", "2024-02-29 12:34:56.5"},
		{txn.TypeTimestamp, 2, "65e079f005", "2024-02-29 12:34:56.05"},
		{txn.TypeTimestamp, 3, "65e079f00005", "2024-02-29 12:34:56.005"},
		{txn.TypeTimestamp, 4, "65e079f00005", "2024-02-29 12:34:56.0005"},
		{txn.TypeTimestamp, 5, "65e079f0000005", "2024-02-29 12:34:56.00005"},
		{txn.TypeTimestamp, 6, "65e079f0000005", "2024-02-29 12:34:56.000005"},
	} {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		if n := oldTemporalSize(c.typ, c.fsp); n != len(b) {
			t.Errorf("type %d fsp %d: size %d, the binlog's %d", c.typ, c.fsp, n, len(b))
			continue
		}
		got, err := decodeOldTemporal(c.typ, c.fsp, b)
		if err != nil || got != c.want {
			t.Errorf("type %d fsp %d %s: %q (%v), want %q", c.typ, c.fsp, c.hex, got, err, c.want)
		}
	}
}

// TestDecodeOldTemporalRefuses: a value that no server writes is an
// error, which tells a wrong guess of the fractional digits.
func TestDecodeOldTemporalRefuses(t *testing.T) {
	for _, c := range []struct {
		typ byte
		fsp int
		hex string
	}{
		{txn.TypeTime, 0, "3c0000"},             // 00:00:60
		{txn.TypeTime, 1, "0102"},               // short
		{txn.TypeDatetime, 3, "ffffffffffffff"}, // year past 9999
		{txn.TypeTimestamp, 2, "0000000164"},    // .100 in two digits
		{txn.TypeDate, 0, "000000"},
	} {
		b, _ := hex.DecodeString(c.hex)
		if got, err := decodeOldTemporal(c.typ, c.fsp, b); err == nil {
			t.Errorf("type %d fsp %d %s: decoded as %q", c.typ, c.fsp, c.hex, got)
		}
	}
}
