package faults

import (
	"context"
	"time"
)

// KindTenantDBLatency is the name of the tenant-DB latency fault.
const KindTenantDBLatency = "tenant_db_latency"

// LatencyParams are the parameters of tenant_db_latency and meta_db_latency.
type LatencyParams struct {
	Latency   time.Duration `yaml:"latency" help:"delay added to every chunk of data, in each chosen direction (a query round trip gains 2x with direction both)"`
	Direction string        `yaml:"direction" enum:"both,upstream,downstream" help:"which stream is delayed: upstream = queries to the DB, downstream = answers from it, both"`
}

func tenantDBLatencyKind() Kind {
	return defineKind(Kind{
		Name:      KindTenantDBLatency,
		Simulates: "a slow tenant DB or a long network path: every query takes longer, inserts pile up behind the bounded insert timeout",
		Mechanism: "a toxiproxy `latency` toxic (jitter 0, so it replays exactly) per chosen stream; removing it delivers anything in flight without delay",
		Targets:   TargetTenant,
		Timing:    TimingSpan,
		resource:  "db",
	}, LatencyParams{Latency: 100 * time.Millisecond, Direction: "both"}, func(env Env, target string, _ time.Duration, p LatencyParams) (Fault, error) {
		px, err := env.TenantProxy(target)
		if err != nil {
			return nil, err
		}
		return newDBLatency(px, KindTenantDBLatency, p), nil
	})
}

// dbLatency delays a DB proxy's traffic for the fault's span.
type dbLatency struct {
	proxy  ToxicProxy
	toxics []toxic
}

func newDBLatency(px ToxicProxy, kind string, p LatencyParams) *dbLatency {
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
