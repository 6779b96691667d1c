package sequencer

import "time"

// Concurrency control: --workers is a ceiling, not a setting. More units
// in flight overlap the target's waits (disk reads, fsyncs of
// one-transaction units), but they also make smaller units (a unit is
// sealed as soon as a worker waits for work), more commits, more
// conflicts and more lock waits. Which wins depends on the workload and
// the target and changes while prepl runs, so the sequencer measures it:
// a Controller is fed one Sample per interval and answers how many units
// may be in flight.

// Sample is what the sequencer measured over one interval at one limit.
type Sample struct {
	Elapsed time.Duration
	// Txns are the source transactions committed in the interval, in
	// Units target commits.
	Txns, Units uint64
	// Conflicts are the attempts rolled back for speculative work
	// (yields, deadlocks between units in flight): work done twice.
	Conflicts uint64
	// Waited are the units committed that had waited for the lock of an
	// earlier unit in flight: they held a slot they could not use.
	Waited uint64
	// Starved: the input ran dry for most of the interval (a live stream
	// caught up, or a reader slower than the target): throughput measured
	// the source, not the limit, so the sample is not compared.
	Starved bool
}

// Rate is the sample's throughput in transactions per second.
func (s Sample) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Txns) / s.Elapsed.Seconds()
}

// Controller is a hill climber over the number of units in flight, from 1
// (one unit at a time: the largest units and fewest commits, what
// --workers 0 does) to Max. It holds a limit for a few intervals, then
// probes the next level up (double) or down (half) for one interval and
// keeps the probe if it measured faster: up only if more than GainUp
// faster (more connections cost the target CPU and locks), down if no
// more than KeepDown slower (fewer is cheaper at the same speed). A probe
// that loses doubles the hold before the next one in that direction, up
// to MaxHold intervals, so a settled run probes rarely and a changed
// workload is still found. Many conflicts (as many rollbacks as commits)
// or lock waits (most units committed waited for an earlier one's lock)
// step down at once.
type Controller struct {
	Max      int
	GainUp   float64 // 0.05
	KeepDown float64 // 0.03
	MinHold  int     // intervals held before the first probe: 2
	MaxHold  int     // 32

	cur     int
	base    float64 // rate of cur, from the last interval at cur
	hasBase bool
	probe   int // level being probed, 0 when none
	held    int // intervals at cur since the last change or probe
	holdUp  int // intervals to hold before probing up
	holdDn  int
	nextUp  bool // the direction of the next probe, when both are possible
}

// NewController returns a controller with limits 1..max, starting at 1.
func NewController(max int) *Controller {
	if max < 1 {
		max = 1
	}
	return &Controller{Max: max, GainUp: 0.05, KeepDown: 0.03, MinHold: 2, MaxHold: 32,
		cur: 1, holdUp: 2, holdDn: 2, nextUp: true}
}

// Limit is how many units may be in flight now (the probe's level while
// one runs).
func (c *Controller) Limit() int {
	if c.probe != 0 {
		return c.probe
	}
	return c.cur
}

// Settled is the limit the controller keeps between probes.
func (c *Controller) Settled() int { return c.cur }

// Observe takes the sample of the interval just ended, run at Limit(),
// and returns the limit for the next one.
func (c *Controller) Observe(s Sample) int {
	if s.Starved || s.Elapsed <= 0 {
		if c.probe != 0 {
			c.probe = 0 // inconclusive: back to what is known
		}
		return c.Limit()
	}
	r := s.Rate()
	at := c.Limit()
	if at > 1 && (s.Conflicts >= max(1, s.Units) || 2*s.Waited > s.Units) {
		// As many units rolled back as committed, or most waited for
		// the locks of earlier ones: fewer in flight, now.
		c.set(max(1, at/2))
		c.holdUp = min(c.MaxHold, 2*c.holdUp)
		return c.Limit()
	}
	if c.probe != 0 {
		p := c.probe
		c.probe = 0
		switch {
		case !c.hasBase:
		case p > c.cur && r > c.base*(1+c.GainUp):
			c.set(p)
			c.base, c.hasBase = r, true
			c.holdUp = c.MinHold // keep climbing soon
			c.nextUp = true
			return c.Limit()
		case p < c.cur && r >= c.base*(1-c.KeepDown):
			c.set(p)
			c.base, c.hasBase = r, true
			c.holdDn = c.MinHold
			c.nextUp = false
			return c.Limit()
		case p > c.cur:
			c.holdUp = min(c.MaxHold, 2*c.holdUp)
		default:
			c.holdDn = min(c.MaxHold, 2*c.holdDn)
		}
		c.held = 0
		return c.Limit()
	}
	c.base, c.hasBase = r, true
	c.held++
	wantUp := c.cur < c.Max && c.held >= c.holdUp
	wantDn := c.cur > 1 && c.held >= c.holdDn
	switch {
	case wantUp && (c.nextUp || !wantDn):
		c.probe = min(c.Max, 2*c.cur)
		c.nextUp = false
	case wantDn:
		c.probe = max(1, c.cur/2)
		c.nextUp = true
	}
	return c.Limit()
}

func (c *Controller) set(n int) {
	c.cur, c.probe, c.held, c.hasBase = n, 0, 0, false
}
