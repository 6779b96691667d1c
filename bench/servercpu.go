package bench

import (
	"time"

	"github.com/prepl/prepl/sandbox"
)

// ServerCPU is the CPU time (user + system) sandbox server s has used so
// far, for benchmarks outside this package.
func ServerCPU(s *sandbox.Server) (time.Duration, error) { return serverCPU(s) }
