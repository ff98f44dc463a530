package proccpu

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Component is a named part of a run whose CPU is measured: seqgate itself, a pod, the DB server.
// PID is asked for at the start and the end of the window (a pod restarted in it has a new one).
type Component struct {
	Name string
	PID  func() int
	// Note, when PID is nil, says why the component is not measured (e.g. a server this run did not
	// start).
	Note string
}

// Usage is one component's CPU over a window.
type Usage struct {
	Name       string  `json:"name"`
	CPUSeconds float64 `json:"cpu_seconds"` // user+system time of the process in the window
	Cores      float64 `json:"cores"`       // CPUSeconds per wall second of the window
	// Note says why the figure is missing or partial ("" when it is whole).
	Note string `json:"note,omitempty"`
	// Measured is false when there is no figure (the note says why).
	Measured bool `json:"measured"`
}

// Window is the CPU of every component over one stretch of wall time.
type Window struct {
	WallSeconds float64 `json:"wall_seconds"`
	Cores       int     `json:"cores"` // CPUs of the machine (runtime.NumCPU)
	Components  []Usage `json:"components"`
}

type start struct {
	pid int
	t   Times
	err error
}

// Meter measures a window: Begin at its start, End at its end.
type Meter struct {
	comps []Component
	began time.Time
	at    []start
	now   func() time.Time
	read  func(int) (Times, error)
}

// NewMeter returns a meter of comps.
func NewMeter(comps []Component) *Meter {
	return &Meter{comps: comps, now: time.Now, read: Read}
}

// Begin marks the window's start.
func (m *Meter) Begin() {
	m.began = m.now()
	m.at = make([]start, len(m.comps))
	for i, c := range m.comps {
		if c.PID == nil {
			continue
		}
		pid := c.PID()
		t, err := m.read(pid)
		m.at[i] = start{pid, t, err}
	}
}

// End closes the window and returns each component's use of it.
func (m *Meter) End() Window {
	wall := m.now().Sub(m.began).Seconds()
	w := Window{WallSeconds: wall, Cores: runtime.NumCPU()}
	for i, c := range m.comps {
		u := Usage{Name: c.Name}
		switch {
		case c.PID == nil:
			u.Note = c.Note
			if u.Note == "" {
				u.Note = "not measured"
			}
		case m.at == nil:
			u.Note = "not measured: the window never began"
		case m.at[i].err != nil:
			u.Note = fmt.Sprintf("not measured: %v", m.at[i].err)
		default:
			pid := c.PID()
			t, err := m.read(pid)
			switch {
			case err != nil || pid != m.at[i].pid || t.Self() < m.at[i].t.Self():
				u.Note = "not measured: " + ErrGone.Error()
			default:
				u.Measured = true
				u.CPUSeconds = (t.Self() - m.at[i].t.Self()).Seconds()
				if wall > 0 {
					u.Cores = u.CPUSeconds / wall
				}
			}
		}
		w.Components = append(w.Components, u)
	}
	return w
}

// Busiest is the measured component that used the most CPU, and whether it was near a full core
// (at least 0.9 of one: a single-threaded part would have run out); ok is false when none was measured.
func (w Window) Busiest() (u Usage, nearCore, ok bool) {
	for _, c := range w.Components {
		if c.Measured && (!ok || c.Cores > u.Cores) {
			u, ok = c, true
		}
	}
	return u, ok && u.Cores >= 0.9, ok
}

// String is the window in one line: each component's cores (CPU seconds per wall second) and the
// busiest one, e.g. "seqgate 0.42, pod-1 0.31, db 0.58 cores over 10.0 s of 2 cores; busiest: db".
func (w Window) String() string {
	var b strings.Builder
	for i, c := range w.Components {
		if i > 0 {
			b.WriteString(", ")
		}
		if c.Measured {
			fmt.Fprintf(&b, "%s %.2f", c.Name, c.Cores)
		} else {
			fmt.Fprintf(&b, "%s (%s)", c.Name, c.Note)
		}
	}
	fmt.Fprintf(&b, " cores over %.1f s of %d cores", w.WallSeconds, w.Cores)
	if u, near, ok := w.Busiest(); ok {
		fmt.Fprintf(&b, "; busiest: %s", u.Name)
		if near {
			b.WriteString(" (near a full core)")
		}
	}
	return b.String()
}
