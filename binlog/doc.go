// Package binlog decodes a MySQL/MariaDB row-based binary log into
// complete transactions of the txn model: the pure core, which does no
// network or file I/O and is fuzzed (fuzz_test.go). Each raw event is
// checked by the event guard (guard.go) before prepl or go-mysql decodes
// it, then the assembler (assemble.go) makes transactions of the events;
// Decoder holds both, and is what the readers drive.
//
// The readers are packages of their own, behind the Reader interface
// here: binlog/stream reads a source live over the replication protocol,
// binlog/fileset reads binlog and relay log files from disk (and scans and
// checks a file set). Both feed the same Decoder, so the same binlog read
// either way gives the same transactions. The binlog file format itself
// (events back to back, relay logs' positions) is decoded here
// (Decoder.DecodeFile), so that the fuzz targets reach it.
package binlog
