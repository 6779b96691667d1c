package main

import (
	"flag"
	"time"

	prun "github.com/prepl/prepl/run"
)

// registerGate registers the flags that hold new work (pause, throttling),
// as gh-ost names them (what they do: prun.GateOptions).
func registerGate(fs *flag.FlagSet, g *prun.GateOptions) {
	fs.StringVar(&g.MaxLoad, "max-load", "", "hold new work while a target status variable is above its limit: 'Threads_running=50[,VAR=N...]'\n"+
		"(checked every second; what is in flight still commits)")
	fs.StringVar(&g.CriticalLoad, "critical-load", "", "stop cleanly (in-flight work committed, position stored, exit 1) when a target status\n"+
		"variable reaches its limit: 'Threads_running=200[,VAR=N...]'")
	fs.IntVar(&g.MaxLagMillis, "max-lag-millis", 0, "hold new work while a --throttle-replica lags more than this (milliseconds; 0: off)")
	fs.Var((*multiFlag)(&g.Replicas), "throttle-replica", "URL of a replica of the target whose lag (Seconds_Behind_Master, or Seconds_Behind_Source on MySQL 8.4) --max-lag-millis bounds\n"+
		"(repeatable; the target's password settings apply)")
	fs.StringVar(&g.FlagFile, "throttle-flag-file", "", "hold new work while this file exists")
	fs.DurationVar(&g.CheckEvery, "throttle-interval", time.Second, "how often --max-load, --critical-load, --max-lag-millis and --throttle-flag-file are checked")
}
