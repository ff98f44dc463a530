package run

import (
	"os"

	"github.com/seqgate/seqgate/harness/infra"
	"github.com/seqgate/seqgate/internal/proccpu"
)

// cpuMeter measures the CPU of each part of the run over the load phase (the steady window the
// rates divide by): seqgate itself (its own threads, not the children it waits for), each pod, and
// the DB server when this run started it. A pod restarted during the load has no figure (its pid
// changed); a server the run did not start is named with the reason it has none.
func cpuMeter(s *state) *proccpu.Meter {
	comps := []proccpu.Component{{Name: "seqgate", PID: os.Getpid}}
	if s.sys != nil && s.sys.fleet != nil {
		for _, p := range s.sys.fleet.Pods() {
			comps = append(comps, proccpu.Component{Name: p.Name, PID: p.PID})
		}
	}
	db := proccpu.Component{Name: "db"}
	switch {
	case s.sys == nil || s.sys.db == nil:
		db.Note = "not measured: no DB server in this run"
	case s.sys.db.Kind == infra.Private:
		db.PID = s.sys.db.ServerPID
	default:
		db.Note = "not measured: not started by this run (" + s.sys.db.Kind + ")"
	}
	return proccpu.NewMeter(append(comps, db))
}
