package main

import prun "github.com/prepl/prepl/run"

// checkBinlogFiles refuses a binlog FILE that is not a regular file
// (prun.CheckBinlogFiles).
var checkBinlogFiles = prun.CheckBinlogFiles
