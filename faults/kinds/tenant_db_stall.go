package kinds

import (
	"context"
	"time"

	"github.com/seqgate/seqgate/faults/fault"
)

// TenantDBStallName is the name of the tenant-DB stall fault.
const TenantDBStallName = "tenant_db_stall"

// Stall endings (the `then` param).
const (
	ThenReset  = "reset"  // every connection through the proxy is closed when the stall ends
	ThenResume = "resume" // held traffic is delivered when the stall ends; connections survive
)

// StallParams are the parameters of tenant_db_stall and meta_db_stall.
type StallParams struct {
	// Then is how the stall ends: ThenReset or ThenResume.
	Then string `yaml:"then" enum:"reset,resume" help:"how the stall ends: reset = every connection through the proxy is closed (held queries fail); resume = held queries are delivered and complete, connections survive"`
}

// stallDefaults are the defaults of both stall kinds.
var stallDefaults = StallParams{Then: ThenReset}

// resumeHold is the latency used to hold traffic in a resumable stall: far longer than any run, so the
// data moves only when the toxic is removed.
const resumeHold = 24 * time.Hour

// TenantDBStall declares tenant_db_stall.
func TenantDBStall() fault.Def[StallParams] {
	return fault.Def[StallParams]{
		Name:      TenantDBStallName,
		Simulates: "the tenant DB stops answering (a serverless DB cold-starting or a hung primary): queries and new connections hang for `for`",
		Mechanism: "then=reset: a toxiproxy `timeout` toxic with timeout 0 on both streams (data is dropped, nothing closes); removing it closes every connection through the proxy. then=resume: a `latency` toxic of 24h on both streams (data is held in order); removing it delivers the held bytes and the connections live on",
		Targets:   fault.TargetTenant,
		Timing:    fault.TimingSpan,
		Resource:  fault.ResourceDB,
		Defaults:  stallDefaults,
		Build: func(env fault.Env, target string, _ time.Duration, p StallParams) (fault.Fault, error) {
			px, err := env.TenantProxy(target)
			if err != nil {
				return nil, err
			}
			return newDBStall(px, TenantDBStallName, p.Then), nil
		},
	}
}

// dbStall stops a DB proxy's traffic for the fault's span (see the kind's Mechanism).
type dbStall struct {
	proxy  fault.ToxicProxy
	toxics []toxic
}

func newDBStall(px fault.ToxicProxy, kind, then string) *dbStall {
	s := &dbStall{proxy: px}
	for _, stream := range []string{streamUp, streamDown} {
		t := toxic{Name: toxicName(kind, stream), Stream: stream}
		if then == ThenResume {
			t.Type, t.Attributes = "latency", map[string]any{"latency": resumeHold.Milliseconds()}
		} else {
			t.Type, t.Attributes = "timeout", map[string]any{"timeout": 0}
		}
		s.toxics = append(s.toxics, t)
	}
	return s
}

func (s *dbStall) Inject(ctx context.Context) error { return addToxics(ctx, s.proxy, s.toxics...) }
func (s *dbStall) Heal(ctx context.Context) error   { return removeToxics(ctx, s.proxy, s.toxics...) }
