package api_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// holdProvision starts POST /v1/provision declaring length body bytes and sends none until finish:
// the dripped provision of an attacker without the provisioning token (hdr nil) or with it.
func holdProvision(t *testing.T, p *pod, length int64, hdr map[string]string) (finish func(), done <-chan int) {
	pr, pw := io.Pipe()
	req, _ := http.NewRequestWithContext(testCtx(t), "POST", p.url+"/v1/provision", pr)
	req.ContentLength = length
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	out := make(chan int, 1)
	go func() {
		resp, err := p.client.Do(req)
		if err != nil {
			out <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		out <- resp.StatusCode
	}()
	return func() { _ = pw.CloseWithError(io.ErrUnexpectedEOF) }, out
}

// TestTenantShares: the request slots and body bytes are reserved after auth, from the caller's own
// share, at most what the handler reads. Each attack of one caller (anonymous dripped provisions
// declaring 16 MiB; one tenant's slow PUTs; one tenant's 16 MiB PUTs) leaves a bystander tenant's
// writes served. The controls give the attacker the whole pod as its share: the same attack then
// makes the bystander's write 429, so the test sees the attack when it works.
func TestTenantShares(t *testing.T) {
	const mib = 1 << 20
	type attack struct {
		n      int
		hold   func(t *testing.T, p *pod, attacker string) (func(), <-chan int)
		admits int // requests of the attack the pod holds in flight
	}
	drippedProvision := func(hdr map[string]string) func(*testing.T, *pod, string) (func(), <-chan int) {
		return func(t *testing.T, p *pod, _ string) (func(), <-chan int) { return holdProvision(t, p, 16*mib, hdr) }
	}
	slowPut := func(length int64) func(*testing.T, *pod, string) (func(), <-chan int) {
		return func(t *testing.T, p *pod, k string) (func(), <-chan int) {
			return holdPut(t, p, k, fmt.Sprintf("/slow%d", time.Now().UnixNano()), length)
		}
	}
	for _, tc := range []struct {
		name          string
		mod           func(*api.Config)
		a             attack
		wantBystander int // the bystander's write
		wantReason    string
	}{
		{name: "4 dripped provisions without the token", a: attack{n: 4, hold: drippedProvision(nil), admits: 0}, wantBystander: 200},
		{name: "4 dripped provisions, open provisioning", mod: func(c *api.Config) { c.Limits.ProvisionToken, c.Limits.OpenProvisioning = "", true },
			a: attack{n: 4, hold: drippedProvision(nil), admits: 4}, wantBystander: 200},
		{name: "control: 4 dripped provisions, reservation the whole budget", mod: func(c *api.Config) {
			c.Limits.ProvisionToken, c.Limits.OpenProvisioning = "", true
			c.Limits.MaxBodyBytes, c.Limits.MaxTenantBodyBytes = 4<<16, 4<<16
		}, a: attack{n: 4, hold: drippedProvision(nil), admits: 4}, wantBystander: 429, wantReason: "body_bytes"},
		{name: "8 slow PUTs of one tenant", mod: func(c *api.Config) { c.Limits.MaxInflight = 8 },
			a: attack{n: 8, hold: slowPut(100), admits: 2}, wantBystander: 200},
		{name: "control: 8 slow PUTs, share the whole pod", mod: func(c *api.Config) { c.Limits.MaxInflight, c.Limits.MaxTenantInflight = 8, 8 },
			a: attack{n: 8, hold: slowPut(100), admits: 8}, wantBystander: 429, wantReason: "inflight"},
		{name: "4 PUTs of one tenant declaring 16 MiB", a: attack{n: 4, hold: slowPut(16 * mib), admits: 1}, wantBystander: 200},
		{name: "control: 4 PUTs declaring 16 MiB, share the whole budget", mod: func(c *api.Config) { c.Limits.MaxTenantBodyBytes = 64 * mib },
			a: attack{n: 4, hold: slowPut(16 * mib), admits: 4}, wantBystander: 429, wantReason: "body_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, poolDef{id: "shared", role: store.RoleShared})
			p := e.pod("p", tc.mod)
			_, attacker := p.provision(t, "")
			_, bystander := p.provision(t, "")
			var dones []<-chan int
			for range tc.a.n {
				finish, done := tc.a.hold(t, p, attacker)
				defer finish()
				dones = append(dones, done)
			}
			// The pod has admitted what it admits, and answered the rest: every held request that is
			// not in flight has its answer.
			answered := 0
			wait.For(t, 30*time.Second, fmt.Sprintf("%d attack requests in flight, the rest answered", tc.a.admits), func() bool {
				for _, d := range dones {
					select {
					case c := <-d:
						if c != 401 && c != 429 {
							t.Errorf("an attack request answered %d before its body was sent", c)
						}
						answered++
					default:
					}
				}
				return answered == tc.a.n-tc.a.admits && counter(t, p, "eventlogd_requests_inflight", nil) == float64(tc.a.admits)
			})
			put := func() (int, http.Header, string) {
				return p.raw(t, "PUT", "/v1/fs/bystander", bystander, strings.NewReader(strings.Repeat("b", 1000)), nil)
			}
			if tc.wantBystander == 429 {
				// An attack request counts as in flight from its admission on, but it holds the
				// attacker's share only once its key is checked (a meta-DB lookup, slow on a loaded
				// machine): until then the bystander passes, or is refused for the anonymous share.
				// The control holds once the attack, in place, refuses it for the reason named.
				var code int
				var h http.Header
				var body string
				tries := 0
				if !wait.Until(30*time.Second, func() bool {
					tries++
					code, h, body = put()
					return code == 429 && counter(t, p, "eventlogd_requests_rejected_total", map[string]string{"reason": tc.wantReason}) >= 1
				}) {
					t.Fatalf("timed out after 30s (%d tries) waiting for the bystander's write refused for %s: last answer %d %q; in flight %v, refused for it %v", tries, tc.wantReason, code, body,
						counter(t, p, "eventlogd_requests_inflight", nil), counter(t, p, "eventlogd_requests_rejected_total", map[string]string{"reason": tc.wantReason}))
				}
				want429(t, "the bystander's write under the control's attack", code, h, body)
				return
			}
			code, _, body := put()
			if code != 200 {
				t.Fatalf("the bystander's write under the attack: %d %s, want 200", code, body)
			}
			if got := counter(t, p, "eventlogd_requests_inflight", nil); got != float64(tc.a.admits) {
				t.Fatalf("in flight after the bystander's write: %v, want the attack's %d", got, tc.a.admits)
			}
		})
	}
}

// TestUnreadAnswerFreesItsSlot: GETs of an 8 MiB file whose answers are never read hold their slot
// only until --response-write-timeout; then the slots (and the answers' buffers) are free. The
// control (a timeout of an hour) holds them over a window four times as long as the release took
// (at least 3 s), so the release is the deadline's doing. A client that reads gets the whole file.
func TestUnreadAnswerFreesItsSlot(t *testing.T) {
	const size, readers = 8 << 20, 2
	var released time.Duration
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		release bool
	}{
		{"response write timeout 2s", 2 * time.Second, true},
		{"control: an hour", time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.pod("p", func(c *api.Config) { c.Limits.ResponseWriteTimeout = tc.timeout })
			_, k := p.provision(t, "")
			p.write(t, k, "/big", strings.Repeat("z", size))
			addr := strings.TrimPrefix(p.url, "http://")
			for range readers {
				c := smallWindowConn(t, addr)
				if _, err := fmt.Fprintf(c, "GET /v1/fs/big HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\n\r\n", k); err != nil {
					t.Fatal(err)
				}
			}
			inflight := func() float64 { return counter(t, p, "eventlogd_requests_inflight", nil) }
			wait.For(t, 30*time.Second, "the unread GETs in flight", func() bool { return inflight() == readers })
			t0 := time.Now()
			if tc.release {
				wait.For(t, 60*time.Second, "the unread GETs to free their slots", func() bool { return inflight() == 0 })
				released = time.Since(t0)
				t.Logf("slots freed %v after the answers stalled", released.Round(time.Millisecond))
			} else {
				window := max(3*time.Second, 4*released)
				for time.Since(t0) < window {
					if got := inflight(); got != readers {
						t.Fatalf("control: in flight %v after %v, want %d held", got, time.Since(t0).Round(time.Millisecond), readers)
					}
					time.Sleep(100 * time.Millisecond) // paces the observation
				}
			}
			// Honest use: a client that reads gets the whole file.
			code, _, body := p.raw(t, "GET", "/v1/fs/big", k, nil, nil)
			if code != 200 || len(body) != size {
				t.Fatalf("a reading client: %d, %d bytes, want 200 and %d", code, len(body), size)
			}
		})
	}
}

// smallWindowConn dials addr with a 4 KiB receive buffer and never reads: the server's writes stall
// once the socket buffers are full.
func smallWindowConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
