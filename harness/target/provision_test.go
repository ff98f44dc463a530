package target

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeService answers /v1/provision like drive9 (202, status provisioning) and /v1/status with the
// statuses in order, then the last one forever; status 0 means "no such endpoint" (404).
type fakeService struct {
	mu       sync.Mutex
	statuses []string
	code     int // /v1/status HTTP code when not 200 (0 = 200)
	polls    int
	bodies   []string
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/v1/provision":
		b, _ := io.ReadAll(r.Body)
		f.bodies = append(f.bodies, string(b))
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(map[string]string{"tenant_id": "0b7c-1e", "api_key": "key-1", "status": "provisioning"})
	case "/v1/status":
		if r.Header.Get("Authorization") != "Bearer key-1" {
			http.Error(w, `{"error":"invalid API key"}`, http.StatusUnauthorized)
			return
		}
		if f.code != 0 {
			http.Error(w, `{"error":"tenant status not enabled"}`, f.code)
			return
		}
		st := f.statuses[min(f.polls, len(f.statuses)-1)]
		f.polls++
		_ = json.NewEncoder(w).Encode(map[string]string{"status": st, "message": "m"})
	default:
		http.NotFound(w, r)
	}
}

func TestProvisionAndWaitReady(t *testing.T) {
	for _, tc := range []struct {
		name     string
		profile  *Service
		statuses []string
		code     int
		key      string
		err      string // "" = ready
		polls    int    // status polls expected
		body     string
		sendPool bool
	}{
		{name: "per tenant: waits for active", profile: perTenant, statuses: []string{"provisioning", "provisioning", "active"}, polls: 3, body: "{}"},
		{name: "per tenant: failed tenant", profile: perTenant, statuses: []string{"provisioning", "failed"}, polls: 2, err: "says failed: m: it will not become active"},
		{name: "per tenant: never active (negative control)", profile: perTenant, statuses: []string{"provisioning"}, err: "is not active after", body: "{}"},
		{name: "per tenant: without status endpoint", profile: perTenant, code: http.StatusNotFound, polls: 0, err: "HTTP 404"},
		{name: "per tenant: wrong key", profile: perTenant, statuses: []string{"active"}, key: "nope", err: "HTTP 401"},
		{name: "bare: without status endpoint is ready", profile: bare, code: http.StatusNotFound, body: "{}"},
		{name: "bare: with status endpoint waits", profile: bare, statuses: []string{"pending", "active"}, polls: 2},
		{name: "pooled: ready at once", profile: pooled, statuses: []string{"provisioning"}, polls: 0, body: `{}`},
		{name: "pooled, as seqgate's own eventlogd pods: asked for the pool", profile: pooled, sendPool: true, statuses: []string{"provisioning"}, polls: 0, body: `{"pool":"tenant_1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeService{statuses: tc.statuses, code: tc.code}
			srv := httptest.NewServer(f)
			defer srv.Close()
			p, err := New(Options{Service: tc.profile}, false)
			if err != nil {
				t.Fatal(err)
			}
			p.SendPool = tc.sendPool
			c := srv.Client()
			tn, err := p.Provision(context.Background(), c, srv.URL, "tenant_1")
			if err != nil {
				t.Fatal(err)
			}
			if tn.ID != "0b7c-1e" || tn.Key != "key-1" || tn.Pool != "tenant_1" {
				t.Errorf("tenant %+v", tn)
			}
			if tc.key != "" {
				tn.Key = tc.key
			}
			err = p.WaitReady(context.Background(), c, srv.URL, tn, 300*time.Millisecond, time.Millisecond)
			if tc.err == "" && err != nil {
				t.Fatalf("WaitReady: %v", err)
			}
			if tc.err != "" {
				var nr *NotReadyError
				if !errors.As(err, &nr) || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "0b7c-1e") {
					t.Fatalf("WaitReady = %v, want a NotReadyError naming the tenant and %q", err, tc.err)
				}
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if tc.polls > 0 && f.polls != tc.polls || tc.polls == 0 && tc.profile == pooled && f.polls != 0 {
				t.Errorf("%d status polls, want %d", f.polls, tc.polls)
			}
			if tc.body != "" && (len(f.bodies) != 1 || f.bodies[0] != tc.body) {
				t.Errorf("provision bodies %q, want %q", f.bodies, tc.body)
			}
		})
	}
}

func TestProvisionRefusalNamesTheAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"no free pool"}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	p, _ := New(Options{Service: pooled}, false)
	p.SendPool = true
	_, err := p.Provision(context.Background(), srv.Client(), srv.URL, "tenant_3")
	for _, want := range []string{"/v1/provision (pool tenant_3)", "HTTP 503", "no free pool", "profile pooled"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// TestProvisionSendsTheToken: with ProvisionToken set, every provision request carries it
// (X-Provision-Token), so a service that requires it provisions; without it the same service
// refuses, and the error quotes the 401.
func TestProvisionSendsTheToken(t *testing.T) {
	const want = "prov-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Provision-Token") != want {
			http.Error(w, `{"error":"provisioning needs the pod's provisioning token"}`, http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, `{"tenant_id":"t1","api_key":"k1","pool":"shared_pool"}`)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		token   string
		wantErr string
	}{{want, ""}, {"", "HTTP 401"}, {"wrong", "HTTP 401"}} {
		p, _ := New(Options{Service: pooled}, false)
		p.ProvisionToken = tc.token
		tn, err := p.Provision(context.Background(), srv.Client(), srv.URL, "shared_pool")
		if tc.wantErr == "" {
			if err != nil || tn.ID != "t1" {
				t.Fatalf("token %q: %+v %v", tc.token, tn, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Fatalf("token %q: %v, want %q", tc.token, err, tc.wantErr)
		}
	}
}
