package sequencer

import (
	"math"
	"time"
)

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

// Wasted is the share of the interval's unit attempts that were rolled
// back: Conflicts over Units + Conflicts.
func (s Sample) Wasted() float64 {
	if s.Conflicts == 0 {
		return 0
	}
	return float64(s.Conflicts) / float64(s.Units+s.Conflicts)
}

// Score is what the controller maximizes: the rate, less the share of
// attempts rolled back. A rollback's time is already in the rate, but
// not what it cost the target (undo, locks held for nothing, the CPU
// other sessions did not get), nor the rollbacks still to come of units
// in flight: a level that commits as fast with a third of its attempts
// rolled back is worse than one that commits as fast with none.
func (s Sample) Score() float64 { return s.Rate() * (1 - s.Wasted()) }

// Controller is a hill climber over the number of units in flight, from 1
// (one unit at a time: the largest units and fewest commits, what
// --workers 0 does) to Max. It holds a limit for a few intervals, then
// probes the next level up (double) or down (half) for one interval and
// keeps the probe if it scored better (Sample.Score): up only if more
// than GainUp better (more connections cost the target CPU and locks),
// down if no more than KeepDown worse (fewer is cheaper at the same
// speed).
//
// Both margins widen by the scatter of the samples themselves (Noise:
// the mean relative difference of consecutive samples at the held
// limit): on a busy machine one interval can measure a third faster or
// slower than the next at the same limit, and a climber that took such
// a sample for a gain would wander up to the ceiling on a workload where
// more units only cost. So a gain must stand out of the scatter twice
// over, and a loss within the scatter is taken as none: where the
// measurements cannot tell, fewer units in flight win.
//
// A probe that loses doubles the hold before the next one in that
// direction, up to MaxHold intervals, so a settled run probes rarely and
// a changed workload is still found. Conflicts at the held limit make
// the next probe go down, soon; as many conflicts as commits, or lock
// waits (most units committed waited for an earlier one's lock), step
// down at once.
type Controller struct {
	Max      int
	GainUp   float64 // 0.05
	KeepDown float64 // 0.03
	MinHold  int     // intervals held before the first probe: 2
	MaxHold  int     // 32

	cur    int
	probe  int // level being probed, 0 when none
	held   int // samples at cur counted since the last change or probe
	holdUp int // samples to hold before probing up
	holdDn int
	nextUp bool // the direction of the next probe, when both are possible
	// mixed: the next sample straddles a change of the limit (units
	// started under the old one still run): it is not counted.
	mixed bool
	// base is the score at cur: a moving average of its samples since
	// the last change (nBase of them). noise is a moving average of the
	// relative difference of consecutive samples at a held limit; it
	// survives changes (the machine's scatter, not the level's).
	base, last float64
	nBase      int
	noise      float64
	nNoise     int
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

// Noise is the measured scatter of the samples: the mean relative
// difference between consecutive samples at a held limit (0 until two
// were seen).
func (c *Controller) Noise() float64 { return c.noise }

// Observe takes the sample of the interval just ended, run at Limit(),
// and returns the limit for the next one.
func (c *Controller) Observe(s Sample) int {
	if s.Starved || s.Elapsed <= 0 {
		if c.probe != 0 {
			c.probe = 0 // inconclusive: back to what is known
			c.mixed = true
		}
		return c.Limit()
	}
	at := c.Limit()
	if at > 1 && (s.Conflicts >= max(1, s.Units) || 2*s.Waited > s.Units) {
		// As many units rolled back as committed, or most waited for
		// the locks of earlier ones: fewer in flight, now.
		c.set(max(1, at/2))
		c.holdUp = min(c.MaxHold, 2*c.holdUp)
		return c.Limit()
	}
	r := s.Score()
	if c.probe != 0 {
		c.endProbe(r)
		return c.Limit()
	}
	if c.mixed {
		c.mixed = false
		return c.Limit()
	}
	c.hold(r, s.Wasted())
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

// hold counts a sample of score r at the held limit.
func (c *Controller) hold(r, wasted float64) {
	if c.nBase > 0 {
		if m := (r + c.last) / 2; m > 0 {
			c.noise = average(c.noise, math.Abs(r-c.last)/m, c.nNoise)
			c.nNoise++
		}
	}
	c.base = average(c.base, r, c.nBase)
	c.last = r
	c.nBase++
	c.held++
	if wasted > c.GainUp && c.cur > 1 {
		// Rolled-back work at the held limit: look below first.
		c.nextUp = false
		c.holdDn = min(c.holdDn, c.MinHold)
	}
}

// endProbe compares the probe's score r with the held limit's.
func (c *Controller) endProbe(r float64) {
	p := c.probe
	c.probe, c.mixed = 0, true
	switch {
	case c.nBase == 0:
	case p > c.cur && r > c.base*(1+c.GainUp+1.5*c.noise):
		c.set(p)
		c.holdUp = c.MinHold // keep climbing soon
		c.nextUp = true
		return
	case p < c.cur && r >= c.base*(1-c.KeepDown-c.noise):
		c.set(p)
		c.holdDn = c.MinHold
		c.nextUp = false
		return
	case p > c.cur:
		c.holdUp = min(c.MaxHold, 2*c.holdUp)
	default:
		c.holdDn = min(c.MaxHold, 2*c.holdDn)
	}
	c.held = 0
}

func (c *Controller) set(n int) {
	c.cur, c.probe, c.held, c.nBase, c.mixed = n, 0, 0, 0, true
}

// average folds x into a moving average of n samples so far: the plain
// mean of the first few, then weight 1/4 for the newest, so that it
// follows a workload that changes.
func average(avg, x float64, n int) float64 {
	w := 1 / float64(min(n+1, 4))
	return avg + w*(x-avg)
}
