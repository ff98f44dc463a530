package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/seqgate/seqgate/faults"
	"github.com/seqgate/seqgate/internal/toxiserver"
)

var _ faults.ToxicProxy = (*Proxy)(nil)

// startToxiproxyServer builds and runs a real toxiproxy server until the test ends; its API URL.
func startToxiproxyServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a toxiproxy server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := toxiserver.Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := toxiserver.Start(ctx, bin, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv.URL
}

// roundTrip sends msg through addr and reads the echo; an error when the proxy breaks the link.
func roundTrip(addr, msg string) (string, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := c.Write([]byte(msg)); err != nil {
		return "", err
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		return "", err
	}
	return string(buf), nil
}

// TestServerSetDrivesAToxiproxyServer: proxies made on a real toxiproxy server carry traffic, count
// it, and obey the fault interface (a reset_peer toxic breaks links until removed, disable refuses
// connections until enabled); Close deletes them from the server. Each fault step has its healthy
// control before and after.
func TestServerSetDrivesAToxiproxyServer(t *testing.T) {
	api := startToxiproxyServer(t)
	up := echo(t)
	ctx := context.Background()
	client := toxiclient.NewClient(api)
	// A proxy left by an earlier run under the same name is replaced, not an error.
	if _, err := client.CreateProxy("tenant_1", "127.0.0.1:0", "127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	s, err := NewServerSet(api)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Add("tenant_1", up)
	if err != nil {
		t.Fatal(err)
	}
	if p.Toxi != nil || !strings.HasPrefix(p.Addr(), "127.0.0.1:") {
		t.Fatalf("server proxy: Toxi %v, addr %q", p.Toxi, p.Addr())
	}
	if got, err := roundTrip(p.Addr(), "hello"); err != nil || got != "hello" {
		t.Fatalf("healthy: %q %v", got, err)
	}
	if c := p.Counters(); c.Conns != 1 || c.BytesUp != 5 || c.BytesDown != 5 {
		t.Fatalf("counters %+v, want 1 conn, 5 bytes each way", c)
	}

	if err := p.AddToxic(ctx, []byte(`{"name":"cut","type":"reset_peer","stream":"upstream","toxicity":1,"attributes":{"timeout":0}}`)); err != nil {
		t.Fatal(err)
	}
	remote, err := client.Proxy("tenant_1")
	if err != nil || len(remote.ActiveToxics) != 1 || remote.ActiveToxics[0].Name != "cut" {
		t.Fatalf("server's toxics: %+v %v", remote, err)
	}
	if got, err := roundTrip(p.Addr(), "hello"); err == nil {
		t.Fatalf("reset_peer toxic: echo %q got through", got)
	}
	if err := p.RemoveToxic(ctx, "cut"); err != nil {
		t.Fatal(err)
	}
	if err := p.RemoveToxic(ctx, "cut"); err != nil {
		t.Fatalf("removing a toxic that is gone: %v", err)
	}
	if got, err := roundTrip(p.Addr(), "again"); err != nil || got != "again" {
		t.Fatalf("after removing the toxic: %q %v", got, err)
	}

	if err := p.SetEnabled(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(p.Addr(), "x"); err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("disabled proxy: %v, want connection refused", err)
	}
	for range 2 {
		if err := p.SetEnabled(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := roundTrip(p.Addr(), "back"); err != nil || got != "back" {
		t.Fatalf("enabled again: %q %v", got, err)
	}
	if err := p.AddToxic(ctx, []byte(`{"name":"x","type":"no_such_toxic","stream":"upstream","toxicity":1}`)); err == nil {
		t.Fatal("an unknown toxic type was accepted")
	}

	s.Close()
	if ps, err := client.Proxies(); err != nil || len(ps) != 0 {
		t.Fatalf("after Close the server still has %v (%v)", ps, err)
	}
}

// TestAdoptServerSet takes over the proxies a server already has (docker-compose.yml's -config) and
// leaves them there on Close; a server without proxies is refused.
func TestAdoptServerSet(t *testing.T) {
	api := startToxiproxyServer(t)
	if _, err := AdoptServerSet(api); err == nil || !strings.Contains(err.Error(), "no proxies") {
		t.Fatalf("adopting an empty server: %v", err)
	}
	up := echo(t)
	client := toxiclient.NewClient(api)
	for _, n := range []string{"meta", "tenant_1"} {
		if _, err := client.CreateProxy(n, "127.0.0.1:0", up); err != nil {
			t.Fatal(err)
		}
	}
	s, err := AdoptServerSet(api)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Names(), ","); got != "meta,tenant_1" {
		t.Fatalf("adopted %s", got)
	}
	p := s.Get("tenant_1")
	if got, err := roundTrip(p.Addr(), "hi"); err != nil || got != "hi" {
		t.Fatalf("adopted proxy: %q %v", got, err)
	}
	if err := p.SetEnabled(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(p.Addr(), "x"); err == nil {
		t.Fatal("disabled adopted proxy still relays")
	}
	_ = p.SetEnabled(context.Background(), true)
	s.Close()
	if ps, err := client.Proxies(); err != nil || len(ps) != 2 {
		t.Fatalf("Close removed adopted proxies: %v %v", ps, err)
	}
}

func TestNewServerSetNamesABadURL(t *testing.T) {
	for _, u := range []string{"127.0.0.1:8474", "ftp://x", "http://127.0.0.1:1"} {
		if _, err := NewServerSet(u); err == nil || !strings.Contains(err.Error(), u) {
			t.Errorf("NewServerSet(%q) = %v, want an error naming it", u, err)
		}
	}
}
