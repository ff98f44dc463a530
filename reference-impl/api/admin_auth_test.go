package api_test

import (
	"strings"
	"testing"

	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestAdminTokenGuardsAdminEndpoints: with a token, every admin endpoint answers 401 without it (or
// with a wrong one) and works with it in either header; the public endpoints are untouched. Control:
// a pod without a token serves the admin endpoints to anyone (the loopback harness's case).
func TestAdminTokenGuardsAdminEndpoints(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	guarded := e.pod("guarded", func(c *api.Config) { c.AdminToken = "s3cret" })
	open := e.pod("open", nil)
	tenant, _ := guarded.provision(t, "ded") // provisioning is not an admin endpoint
	reqs := []struct{ method, path string }{
		{"GET", "/v1/admin/poller"},
		{"GET", "/v1/admin/buffer"},
		{"POST", "/v1/admin/poller/stall?for=1s"},
		{"POST", "/v1/admin/poller/resume"},
		{"POST", "/v1/admin/failpoint/event-insert?for=0s&tenant=" + tenant},
		{"POST", "/v1/admin/failpoint/outbox-hold?delay=100ms&for=0s"},
		{"POST", "/v1/admin/sweep?tenant=" + tenant},
		{"DELETE", "/v1/admin/tenants/no-such-tenant"},
	}
	for _, r := range reqs {
		for _, hdr := range []map[string]string{nil, {api.AdminTokenHeader: "wrong"}, {"Authorization": "Bearer s3cre"}} {
			if code, m := guarded.do(t, r.method, r.path, "", nil, hdr); code != 401 || !strings.Contains(m["error"].(string), api.AdminTokenHeader) {
				t.Errorf("%s %s with %v: %d %v, want 401 naming the header", r.method, r.path, hdr, code, m)
			}
		}
		for _, hdr := range []map[string]string{{api.AdminTokenHeader: "s3cret"}, {"Authorization": "Bearer s3cret"}} {
			if code, m := guarded.do(t, r.method, r.path, "", nil, hdr); code != 200 {
				t.Errorf("%s %s with the token (%v): %d %v", r.method, r.path, hdr, code, m)
			}
		}
		if code, m := open.do(t, r.method, r.path, "", nil, nil); code != 200 {
			t.Errorf("control: %s %s on a pod without a token: %d %v", r.method, r.path, code, m)
		}
	}
	for _, path := range []string{"/healthz", "/metrics"} {
		if code, _ := guarded.do(t, "GET", path, "", nil, nil); code != 200 {
			t.Errorf("GET %s on the guarded pod: %d", path, code)
		}
	}
}

// TestOutboxHoldRefusesBadInput: the outbox-hold failpoint names the parameter it cannot use; a
// disarm (for=0s) needs no delay.
func TestOutboxHoldRefusesBadInput(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded", role: store.RoleDedicated})
	p := e.pod("p", nil)
	for _, c := range []struct {
		query string
		code  int
		want  string
	}{
		{"delay=300ms&for=10s", 200, ""},
		{"for=0s", 200, ""},
		{"delay=300ms&for=soon", 400, "for:"},
		{"delay=300ms&for=-1s", 400, "for:"},
		{"delay=0s&for=10s", 400, "delay:"},
		{"delay=2m&for=10s", 400, "delay:"},
		{"for=10s", 400, "delay:"},
	} {
		code, m := p.do(t, "POST", "/v1/admin/failpoint/outbox-hold?"+c.query, "", nil, nil)
		if code != c.code || (c.want != "" && !strings.Contains(m["error"].(string), c.want)) {
			t.Errorf("%s: %d %v, want %d naming %q", c.query, code, m, c.code, c.want)
		}
	}
}

func TestCheckAdminExposure(t *testing.T) {
	cases := []struct {
		listen string
		admin  bool
		token  string
		ok     bool
	}{
		{"127.0.0.1:7070", true, "", true},
		{"127.0.0.1:0", true, "", true},
		{"[::1]:7070", true, "", true},
		{"localhost:7070", true, "", true},
		{":7070", true, "", false},
		{"0.0.0.0:7070", true, "", false},
		{"[::]:7070", true, "", false},
		{"10.1.2.3:7070", true, "", false},
		{"eventlogd-1:7070", true, "", false},
		{":7070", true, "t", true},
		{":7070", false, "", true},
	}
	for _, c := range cases {
		err := api.CheckAdminExposure(c.listen, c.admin, c.token)
		if (err == nil) != c.ok {
			t.Errorf("CheckAdminExposure(%q, %v, %q) = %v, want ok=%v", c.listen, c.admin, c.token, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), c.listen) {
			t.Errorf("error does not name the listen address %q: %v", c.listen, err)
		}
	}
	if err := api.CheckAdminExposure("nonsense", true, ""); err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("bad address: %v", err)
	}
}
