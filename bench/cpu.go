package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prepl/prepl/sandbox"
)

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat times:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// serverCPU is the CPU time (user + system) a sandbox mariadbd has used
// so far, read from /proc: the difference over a run says how busy the
// target was, and whether a run was bound by the server's CPU.
func serverCPU(s *sandbox.Server) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, "mariadbd.pid"))
	if err != nil {
		return 0, fmt.Errorf("server pid: %w", err)
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("server cpu: %w", err)
	}
	return parseStatCPU(string(stat))
}

// parseStatCPU reads utime + stime from a /proc/PID/stat line. The
// command name (field 2) is in parentheses and may hold spaces, so fields
// are counted after its closing parenthesis.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no command name in %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name, want 13 or more", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// cpuMeter measures a server's CPU time over an interval; a failure to
// read it leaves the measure at 0 rather than failing the run.
type cpuMeter struct {
	s     *sandbox.Server
	start time.Duration
}

func startCPU(s *sandbox.Server) cpuMeter {
	c, _ := serverCPU(s)
	return cpuMeter{s: s, start: c}
}

func (m cpuMeter) elapsed() time.Duration {
	c, err := serverCPU(m.s)
	if err != nil || c < m.start {
		return 0
	}
	return c - m.start
}
