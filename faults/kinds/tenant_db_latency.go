package kinds

import (
	"context"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// TenantDBLatencyName is the name of the tenant-DB latency fault.
const TenantDBLatencyName = "tenant_db_latency"

// LatencyParams are the parameters of tenant_db_latency and meta_db_latency.
type LatencyParams struct {
	// Latency is the delay added to every chunk of data in each chosen direction (toxiproxy works in
	// whole milliseconds, so finer parts are dropped).
	Latency time.Duration `yaml:"latency" help:"delay added to every chunk of data, in each chosen direction (a query round trip gains 2x with direction both)"`
	// Direction is the delayed stream: "upstream" (queries), "downstream" (answers) or "both".
	Direction string `yaml:"direction" enum:"both,upstream,downstream" help:"which stream is delayed: upstream = queries to the DB, downstream = answers from it, both"`
}

// latencyDefaults are the defaults of both latency kinds.
var latencyDefaults = LatencyParams{Latency: 100 * time.Millisecond, Direction: "both"}

// TenantDBLatency declares tenant_db_latency.
func TenantDBLatency() fault.Def[LatencyParams] {
	return fault.Def[LatencyParams]{
		Name:      TenantDBLatencyName,
		Simulates: "a slow tenant DB or a long network path: every query takes longer, inserts pile up behind the bounded insert timeout",
		Mechanism: "a toxiproxy `latency` toxic (jitter 0, so it replays exactly) per chosen stream; removing it delivers anything in flight without delay",
		Targets:   fault.TargetTenant,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourceDB,
		Defaults:  latencyDefaults,
		Build: func(env fault.Env, target string, _ time.Duration, p LatencyParams) (fault.Fault, error) {
			px, err := env.TenantProxy(target)
			if err != nil {
				return nil, err
			}
			return newDBLatency(px, TenantDBLatencyName, p), nil
		},
	}
}

// dbLatency delays a DB proxy's traffic for the fault's span.
type dbLatency struct {
	proxy  fault.ToxicProxy
	toxics []toxic
}

func newDBLatency(px fault.ToxicProxy, kind string, p LatencyParams) *dbLatency {
	l := &dbLatency{proxy: px}
	for _, stream := range directions(p.Direction) {
		l.toxics = append(l.toxics, toxic{
			Name: toxicName(kind, stream), Type: "latency", Stream: stream,
			Attributes: map[string]any{"latency": p.Latency.Milliseconds(), "jitter": 0},
		})
	}
	return l
}

func (l *dbLatency) Inject(ctx context.Context) error { return addToxics(ctx, l.proxy, l.toxics...) }
func (l *dbLatency) Heal(ctx context.Context) error   { return removeToxics(ctx, l.proxy, l.toxics...) }
