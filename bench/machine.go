package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes where the numbers were measured.
type Machine struct {
	CPU          string
	Cores        int
	MemGiB       float64
	MariaDB      string // VERSION() of the servers
	Go           string // the Go that built prepl bench
	PreplVersion string // `prepl version` of the binary timed
	// LoadBefore is the 1-minute load average when the benchmark started,
	// LoadMax the highest seen after a run: other work on the machine
	// makes the times noisy, and these say how much there was.
	LoadBefore, LoadMax float64
}

func (m Machine) String() string {
	return fmt.Sprintf("%d cores (%s), %.0f GiB RAM; MariaDB %s; %s; %s; load average %.1f before the runs, at most %.1f after one",
		m.Cores, m.CPU, m.MemGiB, m.MariaDB, m.Go, m.PreplVersion, m.LoadBefore, m.LoadMax)
}

// LoadAvg is the 1-minute load average, 0 when unknown.
func LoadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, _ := strconv.ParseFloat(f, 64)
	return v
}

// DetectMachine reads the CPU and memory from /proc and asks the prepl
// binary its version.
func DetectMachine(ctx context.Context, preplBin string) Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), CPU: "unknown CPU", LoadBefore: LoadAvg()}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(v, " kB"), 64)
		m.MemGiB = kb / (1 << 20)
	}
	out, err := exec.CommandContext(ctx, preplBin, "version").Output()
	m.PreplVersion = strings.TrimSpace(string(out))
	if err != nil || m.PreplVersion == "" {
		m.PreplVersion = "prepl (version unknown)"
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
