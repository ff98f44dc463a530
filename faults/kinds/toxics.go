package kinds

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	toxiproxy "github.com/Shopify/toxiproxy/v2"

	"github.com/seqgate/seqgate/faults/fault"
)

// toxic is one toxiproxy toxic as AddToxicJson reads it. Toxicity is always 1: toxiproxy draws partial
// toxicity from Go's global random source, which no seed can replay.
type toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream"` // upstream (client -> DB) | downstream (DB -> client)
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

// Streams of a proxy: upstream carries the client's queries to the DB, downstream carries answers back.
const (
	streamUp   = "upstream"
	streamDown = "downstream"
)

var toxicSeq atomic.Int64

// toxicName returns a proxy-unique toxic name for one fault instance.
func toxicName(kind, stream string) string {
	return fmt.Sprintf("seqgate_%s_%d_%s", kind, toxicSeq.Add(1), stream)
}

// directions maps a `direction` param to the toxiproxy streams it covers.
func directions(dir string) []string {
	switch dir {
	case streamUp:
		return []string{streamUp}
	case streamDown:
		return []string{streamDown}
	}
	return []string{streamUp, streamDown}
}

// addToxics adds each toxic to p; if one fails, the ones already added are removed again.
func addToxics(ctx context.Context, p fault.ToxicProxy, ts ...toxic) error {
	for i, t := range ts {
		t.Toxicity = 1
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		if err := p.AddToxic(ctx, b); err != nil {
			return errors.Join(fmt.Errorf("proxy %s: add %s toxic %s: %w", p.ProxyName(), t.Type, t.Name, err), removeToxics(ctx, p, ts[:i]...))
		}
	}
	return nil
}

// removeToxics removes each toxic by name; a toxic that is already gone counts as removed, so a heal
// retried after a partial failure finishes the job.
func removeToxics(ctx context.Context, p fault.ToxicProxy, ts ...toxic) error {
	var errs []error
	for _, t := range ts {
		if err := p.RemoveToxic(ctx, t.Name); err != nil {
			errs = append(errs, fmt.Errorf("proxy %s: remove toxic %s: %w", p.ProxyName(), t.Name, err))
		}
	}
	return errors.Join(errs...)
}

// InProcess is the fault.ToxicProxy of an in-process toxiproxy proxy (the test Env's; the harness's
// proxies implement fault.ToxicProxy themselves, in harness/proxy, in-process or on a server).
func InProcess(p *toxiproxy.Proxy) fault.ToxicProxy { return inProcess{p} }

type inProcess struct{ p *toxiproxy.Proxy }

func (i inProcess) ProxyName() string { return i.p.Name }

func (i inProcess) AddToxic(_ context.Context, toxicJSON []byte) error {
	_, err := i.p.Toxics.AddToxicJson(bytes.NewReader(toxicJSON))
	return err
}

func (i inProcess) RemoveToxic(ctx context.Context, name string) error {
	if err := i.p.Toxics.RemoveToxic(ctx, name); err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
		return err
	}
	return nil
}

func (i inProcess) SetEnabled(_ context.Context, on bool) error {
	if !on {
		i.p.Stop()
		return nil
	}
	if err := i.p.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
		return fmt.Errorf("start again on %s: %w", i.p.Listen, err)
	}
	return nil
}
