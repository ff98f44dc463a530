package kinds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
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
func addToxics(ctx context.Context, p *toxiproxy.Proxy, ts ...toxic) error {
	for i, t := range ts {
		t.Toxicity = 1
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(string(b))); err != nil {
			return errors.Join(fmt.Errorf("proxy %s: add %s toxic %s: %w", p.Name, t.Type, t.Name, err), removeToxics(ctx, p, ts[:i]...))
		}
	}
	return nil
}

// removeToxics removes each toxic by name; a toxic that is already gone counts as removed, so a heal
// retried after a partial failure finishes the job.
func removeToxics(ctx context.Context, p *toxiproxy.Proxy, ts ...toxic) error {
	var errs []error
	for _, t := range ts {
		err := p.Toxics.RemoveToxic(ctx, t.Name)
		if err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
			errs = append(errs, fmt.Errorf("proxy %s: remove toxic %s: %w", p.Name, t.Name, err))
		}
	}
	return errors.Join(errs...)
}
