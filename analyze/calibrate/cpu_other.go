//go:build !linux

package calibrate

import "time"

// slowdown cannot measure a thread's CPU time here: prepl's CPU is taken
// as measured on an idle machine.
func slowdown() float64 { return 1 }

// processCPU cannot be read here: Pipeline then keeps the defaults.
func processCPU() time.Duration { return 0 }
