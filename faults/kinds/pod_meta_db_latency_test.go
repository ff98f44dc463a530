package kinds_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/seqgate/seqgate/faults/fault"
	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// podMetaEnv gives each pod a meta proxy of its own chained in front of the shared one, as the
// harness does.
type podMetaEnv struct {
	*faultstest.Env
	pods map[string]*toxiproxy.Proxy
}

func (e podMetaEnv) PodMetaProxy(pod string) (fault.ToxicProxy, error) {
	if p, ok := e.pods[pod]; ok {
		return kinds.InProcess(p), nil
	}
	return nil, fmt.Errorf("no meta proxy of pod %q", pod)
}

// TestPodMetaDBLatency proves the fault delays the round trips of the target pod's meta connections
// by at least the configured latency (a lower bound, which load cannot break), puts its toxic on
// that pod's proxy only (the other pod's and the shared one stay clean), and leaves none behind.
func TestPodMetaDBLatency(t *testing.T) {
	const lat = 150 * time.Millisecond
	te := faultstest.NewEnv(t, "t1")
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	env := podMetaEnv{Env: te, pods: map[string]*toxiproxy.Proxy{}}
	for _, pod := range []string{"pod-1", "pod-2"} {
		p := toxiproxy.NewProxy(srv, "meta_"+pod, "127.0.0.1:0", te.Proxies["meta"].Listen)
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		env.pods[pod] = p
	}
	ctx := context.Background()
	db, err := sql.Open("mysql", te.DSNAt(env.pods["pod-1"].Listen))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	f := build(t, kinds.PodMetaDBLatency(), env, "pod-1", time.Second, kinds.LatencyParams{Latency: lat, Direction: "both"})
	if err := f.Inject(ctx); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*toxiproxy.Proxy{"pod-1": env.pods["pod-1"], "pod-2": env.pods["pod-2"], "meta": te.Proxies["meta"]} {
		if n := len(p.Toxics.GetToxicArray()); (n > 0) != (name == "pod-1") {
			t.Errorf("proxy %s has %d toxics; only pod-1's may have any (one per direction)", name, n)
		}
	}
	start := time.Now()
	if _, err := conn.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 2*lat {
		t.Errorf("round trip through pod-1's meta proxy took %s, want >= %s", took, 2*lat)
	}
	if err := f.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(env.pods["pod-1"].Toxics.GetToxicArray()); n != 0 {
		t.Errorf("%d toxics left after Heal", n)
	}
}

// An Env without per-pod meta proxies (an external target, or one that does not run the pods) is a
// Build error naming the pod, before the run.
func TestPodMetaDBLatencyNeedsPodProxies(t *testing.T) {
	te := faultstest.NewEnv(t)
	_, err := kinds.PodMetaDBLatency().Build(te, "pod-2", time.Second, kinds.LatencyParams{Latency: time.Millisecond, Direction: "both"})
	if err == nil || !strings.Contains(err.Error(), "pod-2") || !strings.Contains(err.Error(), "per-pod meta DB proxies") {
		t.Fatalf("error %v, want one naming pod-2 and the missing per-pod proxies", err)
	}
}
