package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/seqgate/seqgate/live"
)

// serveLive serves seqgate's own metrics of the run at http://addr/metrics until stop is called. The
// returned Metrics' Observe feeds them every ledger record (run.Options.Observe), and its ShowVerdict
// adds the verifier's anomalies once the run is verified.
func serveLive(addr string, stderr io.Writer) (m *live.Metrics, stop func(), err error) {
	reg := prometheus.NewRegistry()
	m, err = live.NewMetrics(reg)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-addr %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "seqgate: metrics server: %v\n", err)
		}
	}()
	fmt.Fprintf(stderr, "seqgate: live metrics at http://%s/metrics\n", ln.Addr())
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
	return m, stop, nil
}
