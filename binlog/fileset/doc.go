// Package fileset reads a set of binlog or relay log files from disk, in
// the order given, as a binlog.Reader (Open): it opens the files, skips
// to the start file and offset, and decodes them ahead of the caller in
// a goroutine of its own, within a memory budget. The decoding itself,
// the binlog file format included, is binlog.Decoder's.
//
// Before a file set is replayed it is shown to be one stream: ScanFile
// reads what each file says of its place (format description, GTID
// lists, GTIDs, the closing rotate) without decoding its rows, and
// CheckContinuity and CheckResume judge the set from those summaries
// (continuity.go).
package fileset
