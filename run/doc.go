// Package run owns one run of prepl's applier: Replicate (a live source
// over the replication protocol) and Replay (binlog files, point-in-time
// recovery). Both go through the same steps (run.go): open the target and
// check it, claim the channel (its lock and the skips `prepl skip` asked
// for), load the resume point, start the throttle gate and the watch
// (metrics, /status, progress lines, the progress bar), read ahead with
// --prefetch, apply.Run, stop, summarize.
//
// It also owns what a run is made of beyond the engine (package apply):
// the channel store a target keeps (store.Store: lock, skip requests, positions,
// channels, half-applied units; Target adds the engine's apply.Target) for
// MySQL and PostgreSQL, the composed transaction filter (replay's
// selection, --until-gtid and --skip-gtid, the table filter, the skip
// requests), the continuity check of a file set, the refusal of a source
// that is the target, the privilege warnings, how an endpoint's password
// and TLS settings are found (Secrets), the memory budget and Go's memory
// limit, the changes prepl skip and prepl reset make to an idle channel
// (OpenIdle, AddSkip, Reset), how prepl status judges what it reads
// (Health), which errors a restart cannot fix (Fatal), and a replay's
// dry run (DryRun: what would be applied, and with PrintSQL the SQL the
// target would be sent, from package mysql's renderer).
//
// Package run writes nothing to standard output: it logs to Options.Log
// (and draws the progress bar on Options.Watch.Terminal), writes a dry
// run to the writer it is given, and returns a Summary; cmd/prepl parses
// flags into Options, calls run and prints.
// Errors a user must fix before anything can work wrap ErrUsage (exit
// code 2).
package run
