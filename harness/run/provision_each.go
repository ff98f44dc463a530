package run

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seqgate/seqgate/harness/scenario"
	"github.com/seqgate/seqgate/internal/sleep"
)

// DefaultProvisionConcurrency is how many tenants a run provisions at once unless
// Options.ProvisionConcurrency says otherwise: enough to hide a request's round trip and the
// service's database work for a thousand tenants, few enough not to swamp a small service.
const DefaultProvisionConcurrency = 16

// ProvisionTimeout bounds a run's whole provisioning (every tenant, with the 429 waits of a service
// that rate-limits it): past it the run stops with the tenants still missing.
const ProvisionTimeout = 10 * time.Minute

// provisionEvery is how often long provisioning prints how far it is.
var provisionEvery = 2 * time.Second // a test shortens it

// provisionClient carries the provisioning requests: idle connections kept for as many requests as
// may be in flight, so parallel provisioning reuses its connections instead of dialing each time.
var provisionClient = &http.Client{Timeout: 30 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 4 * DefaultProvisionConcurrency, IdleConnTimeout: 30 * time.Second}}

// provisionEach calls one for every slot, at most conc at once (conc <= 0: the default), and returns
// the tenants in the slots' order. The first error stops the others and is returned naming its
// tenant (tenant_<n>, group); the whole is bounded by ProvisionTimeout. Every provisionEvery it
// prints "provision: 430/1000 tenants active" to progress (when not nil) and the log.
func provisionEach(ctx context.Context, log *slog.Logger, progress io.Writer, slots []scenario.Tenant, conc int,
	one func(ctx context.Context, slot scenario.Tenant) (tenant, error)) ([]tenant, error) {
	if conc <= 0 {
		conc = DefaultProvisionConcurrency
	}
	conc = min(conc, max(len(slots), 1))
	ctx, cancel := context.WithTimeoutCause(ctx, ProvisionTimeout, fmt.Errorf("provisioning took longer than %s", ProvisionTimeout))
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)

	out := make([]tenant, len(slots))
	var (
		done     atomic.Int64
		mu       sync.Mutex
		firstErr error
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	begin := time.Now()
	report := func() {
		line := fmt.Sprintf("provision: %d/%d tenants active", done.Load(), len(slots))
		if progress != nil {
			fmt.Fprintln(progress, line)
		}
		log.Info("provisioning", "active", done.Load(), "of", len(slots), "took", time.Since(begin).Round(time.Millisecond).String())
	}
	progCtx, progStop := context.WithCancel(ctx)
	progDone := make(chan struct{})
	go func() { defer close(progDone); sleep.Every(progCtx, provisionEvery, report) }()

	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(slots) || ctx.Err() != nil {
					return
				}
				slot := slots[i]
				t, err := one(ctx, slot)
				if err != nil {
					if c := context.Cause(ctx); c != nil && ctx.Err() != nil && c != ctx.Err() { // say it was the bound
						err = fmt.Errorf("%w (%v)", err, c)
					}
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("provision tenant_%d (group %q, pool %s): %w", slot.Index, slot.Group, slot.Pool, err)
						stop(firstErr)
					}
					mu.Unlock()
					return
				}
				out[i] = t
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	progStop()
	<-progDone
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil { // the caller's ctx ended before any tenant failed
		return nil, fmt.Errorf("provisioning: %d of %d tenants: %w", done.Load(), len(slots), context.Cause(ctx))
	}
	if time.Since(begin) >= provisionEvery {
		report()
	}
	log.Info("tenants provisioned", "count", len(out), "concurrency", conc, "took", time.Since(begin).Round(time.Millisecond).String())
	return out, nil
}
