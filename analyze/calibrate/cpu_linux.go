package calibrate

import (
	"crypto/sha256"
	"runtime"
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's usage.
const rusageThread = 1

// slowdown is how much longer than its CPU time prepl's own work takes on
// this machine now: wall time over the thread's CPU time of a fixed
// CPU-bound loop (1 on an idle machine; 2 when prepl gets half a core).
func slowdown() float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var r0, r1 syscall.Rusage
	if syscall.Getrusage(rusageThread, &r0) != nil {
		return 1
	}
	start := time.Now()
	buf := make([]byte, 64<<10)
	for i := 0; i < 2000; i++ { // about 100 ms of one core
		sum := sha256.Sum256(buf)
		buf[i%len(buf)] = sum[0]
	}
	wall := time.Since(start)
	if syscall.Getrusage(rusageThread, &r1) != nil {
		return 1
	}
	cpu := time.Duration(r1.Utime.Nano()-r0.Utime.Nano()) + time.Duration(r1.Stime.Nano()-r0.Stime.Nano())
	if cpu <= 0 {
		return 1
	}
	return max(1, float64(wall)/float64(cpu))
}

// processCPU is the CPU time this process has used, all threads.
func processCPU() time.Duration {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
