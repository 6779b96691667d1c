package main

import (
	"flag"

	prun "github.com/prepl/prepl/run"
)

// registerSelect registers replay's selection flags: mysqlbinlog's, with
// the same names and meanings, plus prepl's GTID ones (prun.SelectSpec).
func registerSelect(fs *flag.FlagSet, s *prun.SelectSpec) {
	fs.StringVar(&s.StartGTID, "start-gtid", "", "GTID position already applied: start with the transaction after it (per domain)")
	fs.StringVar(&s.StopGTID, "stop-gtid", "", "stop after applying this GTID (inclusive); when it is not in the files, before the first later\n"+
		"transaction of its domain (MariaDB) or of its UUID (MySQL)")
	fs.StringVar(&s.StartDatetime, "start-datetime", "", "apply only transactions committed at or after this time (mysqlbinlog's --start-datetime):\n"+
		"\"2026-11-20 09:59:00\" in the local time zone as mysqlbinlog prints it (or --timezone),\n"+
		"or with an explicit zone: \"2026-11-20 09:59:00+01:00\", \"2026-11-20T08:59:00Z\"")
	fs.StringVar(&s.StopDatetime, "stop-datetime", "", "stop before the first transaction committed at or after this time (mysqlbinlog's --stop-datetime;\n"+
		"same forms as --start-datetime; before this version it was read as UTC)")
	fs.StringVar(&s.Timezone, "timezone", "", "time zone of --start-datetime/--stop-datetime without a zone: an IANA name (Europe/Paris), UTC,\n"+
		"or an offset (+01:00); default the local zone, as mysqlbinlog")
	fs.StringVar(&s.StartPosition, "start-position", "", "skip the transactions of the first file that begin before this offset (mysqlbinlog's\n"+
		"--start-position: the \"# at N\" of a transaction's first event; an offset inside a transaction is refused)")
	fs.StringVar(&s.StopPosition, "stop-position", "", "in the last file, stop before the first transaction that does not end at or before this\n"+
		"offset (mysqlbinlog's --stop-position: what it prints up to N, less a transaction cut at N)")
	fs.StringVar(&s.Database, "database", "", "apply only this database, as mysqlbinlog --database: row changes of its tables, and statements\n"+
		"whose default database (USE) is it; a statement naming db.table under another default database is left out")
	fs.StringVar(&s.IncludeGTIDs, "include-gtids", "", "apply only these GTIDs: a MySQL GTID set (uuid:1-5:7,uuid2[:tag]:3) or MariaDB GTIDs\n"+
		"(0-1-5, or a range 0-1-5-9 of sequence numbers 5 to 9); transactions without a GTID are left out.\n"+
		"A set none of whose GTIDs the files hold is refused (here and in --exclude-gtids, --skip-gtid)")
	fs.StringVar(&s.ExcludeGTIDs, "exclude-gtids", "", "do not apply these GTIDs (same forms as --include-gtids); the position moves past them")
	fs.Var((*multiFlag)(&s.SkipGTID), "skip-gtid", "do not apply this GTID (repeatable); the position still moves past it")
	fs.Var((*multiFlag)(&s.SkipPosition), "skip-position", "do not apply the transaction that begins at FILE:OFFSET (repeatable; for a binlog without\n"+
		"GTIDs, as an error names it); the position still moves past it")
}
