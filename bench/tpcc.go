package bench

import _ "embed"

// tpccLua is the TPC-C-like workload's sysbench script; see its header for
// what it does and the options it takes.
//
//go:embed lua/tpcc.lua
var tpccLua []byte
