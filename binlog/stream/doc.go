// Package stream reads a MySQL/MariaDB source's binlog live over the
// replication protocol, as a binlog.Reader (Open): it registers as a
// replica, starts the binlog dump at a GTID position or a file and
// offset, reads the events off the socket (dump.go), and hands them to a
// binlog.Decoder. It reconnects after a network error and resumes at the
// end of the last transaction returned, watches the source's silence, and
// can stop at the source's end as of when it was opened (StopAtEnd).
//
// Preflight checks, before reading, that a source's binlog settings let
// it be applied row by row.
package stream
