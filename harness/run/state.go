package run

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/harness/audit"
	"github.com/seqgate/seqgate/harness/consumer"
	"github.com/seqgate/seqgate/harness/load"
	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/harness/scrape"
	"github.com/seqgate/seqgate/ledger"
)

// state is what the phases hand on: the run's identity, clock and outputs (set before the first
// phase), then one part per phase, each filled by the phase named beside it and read by later ones.
type state struct {
	o          Options
	sc         *scenario.Scenario
	target     target
	id         string    // run id: Options.RunID, else <scenario>-<UTC time>
	wall       time.Time // when Run was called (result.json's wall time)
	start      time.Time // the ledger's clock origin
	w          *ledger.Writer
	ledgerFile *os.File    // under w, which does not close it (closeLedger does)
	sink       *headedSink // holds records back until the run record is line one
	res        Result
	log        *slog.Logger // names the run; each phase adds its own name
	clock      *loadClock   // the load's start, which consumers and faults set up earlier wait for

	sys     *system        // up
	tenants []tenant       // provision
	env     *env           // provision: the faults' view of the run
	cons    *consumerSet   // consumers
	faults  *faults.Runner // schedule (nil: no faults)
	driver  *load.Driver   // load
	samp    *sampling      // load, stopped by stop
	passes  *audit.Passes  // load: audit passes during the run (nil: only the final audit)
	drained bool           // drain
}

type tenant struct {
	scenario.Tenant
	ID, Key string
}

// Name is the tenant's stable name for fault targets (tenant_<index>), unlike ID, which the service
// draws at provision time.
func (t tenant) Name() string { return fmt.Sprintf("tenant_%d", t.Index) }

// consumerSet is the consumers phase's part: the consumers, which of them start late, and how to
// stop them all (the stop phase, or cleanup after an error).
type consumerSet struct {
	all  []*consumer.Consumer
	late map[*consumer.Consumer]bool
	stop context.CancelFunc
	wg   sync.WaitGroup
}

func (c *consumerSet) halt() {
	c.stop()
	c.wg.Wait()
}

// sampling is the /metrics scraper and the proxy sampler, started with the load and stopped after
// the drain.
type sampling struct {
	scraper *scrape.Scraper // nil without pods
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

func (p *sampling) halt() {
	p.stop()
	p.wg.Wait()
}

// loadClock is the start of the load phase. Late consumers and the fault runner are set up before
// it and count from it.
type loadClock struct {
	at    time.Time     // set once, before the load, the fault runner and the hooks start
	begun chan struct{} // closed once at is set
}

func (c *loadClock) mark() {
	c.at = time.Now()
	close(c.begun)
}

// newState prepares the run directory (pods/, run.log, scenario.yaml, the ledger) and the state the
// first phase gets. closeLog closes run.log, after everything else.
func newState(o Options) (s *state, closeLog func(), err error) {
	s = &state{o: o, sc: o.Scenario, target: targetFor(o), wall: time.Now(), clock: &loadClock{begun: make(chan struct{})}}
	if err := checkRunDir(o.Dir, s.sc.Pods.Count); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "pods"), 0o755); err != nil {
		return nil, nil, err
	}
	logf, err := CreateFile(o.Dir, "run.log", 0o644)
	if err != nil {
		return nil, nil, err
	}
	out := io.Writer(logf)
	if o.Log != nil {
		out = io.MultiWriter(o.Log, logf)
	}
	s.id = o.RunID
	if s.id == "" {
		s.id = fmt.Sprintf("%s-%s", s.sc.Name, s.wall.UTC().Format("20060102T150405"))
	}
	// every line names its run, then its phase
	s.log = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{ReplaceAttr: dropTime})).With("run", s.id)
	s.res = Result{RunID: s.id, Dir: o.Dir, Ledger: filepath.Join(o.Dir, "ledger.jsonl.gz")}
	if b, err := s.sc.Marshal(); err == nil {
		_ = writeFile(o.Dir, "scenario.yaml", b, 0o644)
	}
	if s.ledgerFile, err = CreateFile(o.Dir, filepath.Base(s.res.Ledger), 0o644); err != nil {
		logf.Close()
		return nil, nil, err
	}
	s.w = ledger.NewGzipWriter(s.ledgerFile)
	if o.Observe != nil {
		s.w.Observe(o.Observe)
	}
	s.sink = &headedSink{w: s.w}
	s.start = time.Now()
	return s, func() { logf.Close() }, nil
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// now is the ledger's clock.
func (s *state) now() int64 { return time.Since(s.start).Nanoseconds() }

// closeLedger ends the ledger's gzip stream and closes its file (again: a no-op error, ignored by cleanup).
func (s *state) closeLedger() error {
	err := s.w.Close()
	if cerr := s.ledgerFile.Close(); err == nil {
		err = cerr
	}
	return err
}
