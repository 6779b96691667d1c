//go:build !linux

package calibrate

// slowdown cannot measure a thread's CPU time here: prepl's CPU is taken
// as measured on an idle machine.
func slowdown() float64 { return 1 }
