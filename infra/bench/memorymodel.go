package main

// The memory step's measure of one function and its cost model.

import (
	"encoding/json"
	"errors"
	"time"

	"bizdata/shared/app/lambdas"
)

// fnUsage is what one function measured.
type fnUsage struct {
	coldRSS, peakRSS float64       // MB
	cpu              time.Duration // mean per event of the sequence (utime+stime)
	events           []eventTime   // each event of the sequence
	ordinary         []eventTime   // the ordinary ones: the cost model's
	latency          []eventTime   // the p50 check's: the ordinary ones, or a dispatcher's backlog
}

// eventTime is one event's wall and CPU time.
type eventTime struct{ wall, cpu time.Duration }

// at models the event's duration in seconds at size MB: its CPU part slows
// down in proportion below one full vCPU; the rest (waiting) does not.
func (s eventTime) at(size int) float64 {
	return max(0, s.wall-s.cpu).Seconds() + s.cpu.Seconds()*max(1, float64(fullVCPU)/float64(size))
}

// p50 is the median modelled duration of the latency samples at size.
func (u fnUsage) p50(size int) float64 {
	d := make([]time.Duration, len(u.latency))
	for i, s := range u.latency {
		d[i] = time.Duration(s.at(size) * float64(time.Second))
	}
	return median(d).Seconds()
}

// cost is the price of a million ordinary events at size, in dollars.
func (u fnUsage) cost(size int) float64 {
	total := 0.0
	for _, s := range u.ordinary {
		total += s.at(size)
	}
	return 1e6 * (pricePerCall + total/float64(len(u.ordinary))*float64(size)/1024*pricePerGBs)
}

// mean is the ordinary events' mean wall and CPU time.
func (u fnUsage) mean() eventTime {
	var m eventTime
	for _, s := range u.ordinary {
		m.wall += s.wall / time.Duration(len(u.ordinary))
		m.cpu += s.cpu / time.Duration(len(u.ordinary))
	}
	return m
}

// choose returns the size that costs least whose modelled p50 is within
// 1.25x of 256 MB's and whose peak RSS is under half of it: the smallest
// such size unless a larger one costs at least half a cent less per million
// (below a full vCPU, CPU-bound work costs the same at every size). It is
// the largest size when none fits.
func (u fnUsage) choose() int {
	best := 0
	for _, size := range memorySizes {
		fits := u.peakRSS < float64(size)/2 && u.p50(size) <= 1.25*u.p50(256)
		if fits && (best == 0 || u.cost(size) < u.cost(best)-0.005) {
			best = size
		}
	}
	if best == 0 {
		return memorySizes[len(memorySizes)-1]
	}
	return best
}

// fnEvent is one event for a function: built when it is sent (after a key
// rotation, or once its payments exist), a check of the answer, and whether
// it is an ordinary one (the latency and cost model's) or an extreme one
// (there for the peak RSS).
type fnEvent struct {
	event    func() (any, error)
	check    func(answer []byte) error
	ordinary bool
}

// fnPlan is what a function is sent; deadline is the time each event is given.
type fnPlan struct {
	cold     fnEvent
	sequence []fnEvent
	deadline time.Duration
	env      []string // added to the function's environment
	stop     func()   // stops what the plan started (a mail server), or nil
}

// measureFunction starts the function, sends it its plan and reads its usage.
func (b *bench) measureFunction(bin, name string, p fnPlan) (fnUsage, error) {
	var u fnUsage
	proc, err := b.startLambda(bin, name, append([]string{"WEBHOOK_ALLOW_PRIVATE=1"}, p.env...)...)
	if err != nil {
		return u, err
	}
	defer proc.stop()
	send := func(r fnEvent) (eventTime, error) {
		ev, err := r.event()
		if err != nil {
			return eventTime{}, err
		}
		j, err := json.Marshal(ev)
		if err != nil {
			return eventTime{}, err
		}
		cpu0, err := proc.runTime()
		if err != nil {
			return eventTime{}, err
		}
		start := time.Now()
		answer, err := proc.invoke(j, p.deadline)
		if err != nil {
			return eventTime{}, err
		}
		s := eventTime{wall: time.Since(start)}
		cpu, err := proc.runTime()
		s.cpu = cpu - cpu0
		return s, errors.Join(err, r.check([]byte(answer)))
	}
	if _, err := send(p.cold); err != nil {
		return u, err
	}
	if u.coldRSS, err = proc.peakRSS(); err != nil {
		return u, err
	}
	cpu0, err := proc.cpuTime()
	if err != nil {
		return u, err
	}
	for _, r := range p.sequence {
		s, err := send(r)
		if err != nil {
			return u, err
		}
		u.events = append(u.events, s)
		if r.ordinary {
			u.ordinary = append(u.ordinary, s)
		}
	}
	cpu, err := proc.cpuTime()
	if err != nil {
		return u, err
	}
	u.cpu, u.latency = (cpu-cpu0)/time.Duration(len(p.sequence)), u.ordinary
	u.peakRSS, err = proc.peakRSS()
	return u, err
}

// scaleToDispatchRuns reads retry-webhooks' usage: a run with nothing due, then runs
// that sent sent deliveries in all, each cut to hookWindow. A run on AWS
// lasts lambdas.DispatchFor whatever its size, so its cost is that of the busy
// runs scaled to that length; what its size changes is how fast it works
// through a backlog, which is CPU-bound (sending on a fast network), so its
// latency is a delivery's CPU time. It returns that.
func (u *fnUsage) scaleToDispatchRuns(sent int64) time.Duration {
	scale := lambdas.DispatchFor / hookWindow
	m := u.mean()
	perDelivery := (m.cpu - u.events[0].cpu) * time.Duration(len(u.ordinary)) / time.Duration(sent)
	for i := range u.ordinary {
		u.ordinary[i] = eventTime{u.ordinary[i].wall * scale, u.ordinary[i].cpu * scale}
	}
	u.cpu *= scale
	u.latency = []eventTime{{perDelivery, perDelivery}}
	return perDelivery
}
