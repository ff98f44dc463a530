package proccpu

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// A stat line of a real mariadbd and of a command whose name holds spaces and parentheses.
const (
	statMariadb = "4242 (mariadbd) S 4200 4242 4200 0 -1 4194560 20522 0 12 0 1234 567 89 10 20 0 37 0 9876543 1234567890 40000 18446744073709551615 1 1 0 0 0 0 0 4096 1260 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	statOdd     = "77 (a) b (c)) R 1 77 77 0 -1 4194304 100 0 0 0 5 7 3 4 20 0 1 0 100 1000 10 18446744073709551615\n"
)

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     Times
		err      string
	}{
		{"mariadbd", statMariadb, Times{User: 12340 * time.Millisecond, System: 5670 * time.Millisecond, ChildUser: 890 * time.Millisecond, ChildSystem: 100 * time.Millisecond}, ""},
		{"name with parentheses", statOdd, Times{User: 50 * time.Millisecond, System: 70 * time.Millisecond, ChildUser: 30 * time.Millisecond, ChildSystem: 40 * time.Millisecond}, ""},
		{"empty", "", Times{}, "no (command) field"},
		{"no command", "1 S 2 3", Times{}, "no (command) field"},
		{"pid not a number", "x (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", Times{}, "pid field"},
		{"short", "1 (a) S 1 2 3", Times{}, "fields after the command"},
		{"negative ticks", "1 (a) S 1 1 1 0 -1 0 0 0 0 0 -5 7 3 4 20", Times{}, "field 14"},
		{"garbage ticks", "1 (a) S 1 1 1 0 -1 0 0 0 0 0 5 x 3 4 20", Times{}, "field 15"},
		{"huge", "1 (a) " + strings.Repeat("9 ", 3000), Times{}, "longer than any"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseStat([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseStat: err %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseStat = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// TestReadSelf reads this process's real stat file after burning some CPU: the time is positive
// and no more than the test's wall time on every core.
func TestReadSelf(t *testing.T) {
	t0 := time.Now()
	before, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for time.Since(t0) < 200*time.Millisecond {
		x++
	}
	after, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	d := after.Self() - before.Self()
	if d <= 0 || d > time.Since(t0)*time.Duration(64) {
		t.Fatalf("a 200 ms busy loop (%d turns) used %v of CPU", x, d)
	}
	if _, err := Read(0); err == nil {
		t.Error("Read(0) gave no error")
	}
}

func TestMeter(t *testing.T) {
	clock := time.Unix(0, 0)
	ticks := map[int]time.Duration{10: time.Second, 20: 0}
	pids := map[string]int{"seqgate": 10, "pod-1": 20}
	m := NewMeter([]Component{
		{Name: "seqgate", PID: func() int { return pids["seqgate"] }},
		{Name: "pod-1", PID: func() int { return pids["pod-1"] }},
		{Name: "db", Note: "not measured: not started by this run"},
		{Name: "gone", PID: func() int { return 99 }},
	})
	m.now = func() time.Time { return clock }
	m.read = func(pid int) (Times, error) {
		v, ok := ticks[pid]
		if !ok {
			return Times{}, errors.New("no such process")
		}
		return Times{User: v / 2, System: v / 2}, nil
	}
	m.Begin()
	clock = clock.Add(4 * time.Second)
	ticks[10] += 2 * time.Second
	ticks[20] += 3900 * time.Millisecond
	w := m.End()
	if w.WallSeconds != 4 || len(w.Components) != 4 {
		t.Fatalf("window %+v", w)
	}
	want := []Usage{
		{Name: "seqgate", CPUSeconds: 2, Cores: 0.5, Measured: true},
		{Name: "pod-1", CPUSeconds: 3.9, Cores: 0.975, Measured: true},
		{Name: "db", Note: "not measured: not started by this run"},
		{Name: "gone", Note: "not measured: no such process"},
	}
	for i, u := range w.Components {
		if u != want[i] {
			t.Errorf("component %d: %+v, want %+v", i, u, want[i])
		}
	}
	if u, near, ok := w.Busiest(); !ok || u.Name != "pod-1" || !near {
		t.Errorf("busiest %+v near %v ok %v, want pod-1 near a core", u, near, ok)
	}

	// A pod restarted in the window has a new pid: its figure is not the difference of two processes.
	m.Begin()
	pids["pod-1"] = 21
	ticks[21] = 10 * time.Millisecond
	clock = clock.Add(time.Second)
	w = m.End()
	if u := w.Components[1]; u.Measured || !strings.Contains(u.Note, ErrGone.Error()) {
		t.Errorf("restarted pod: %+v", u)
	}
}
