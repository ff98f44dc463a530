package api_test

import (
	"strings"
	"testing"

	"github.com/seqgate/seqgate/reference-impl/api"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestProvisioningNeedsATokenByDefault: a pod without a provisioning token does not start unless
// open provisioning is asked for by name; the two together are refused too.
func TestProvisioningNeedsATokenByDefault(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name    string
		token   string
		open    bool
		wantErr string
	}{
		{"no token", "", false, "--provision-token"},
		{"token and open", "tok", true, "exclude each other"},
		{"token", "tok", false, ""},
		{"open provisioning", "", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.testConfig("p-" + strings.ReplaceAll(tc.name, " ", "-"))
			cfg.Limits.ProvisionToken, cfg.Limits.OpenProvisioning = tc.token, tc.open
			srv, err := api.New(testCtx(t), cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				_ = srv.Close()
				return
			}
			if err == nil {
				_ = srv.Close()
				t.Fatalf("api.New started a pod, want an error naming %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %q does not name %q", err, tc.wantErr)
			}
		})
	}
}

// TestAnonymousProvisionsClaimNoDedicatedPool: under open provisioning, empty anonymous provisions
// land in the shared pool and leave the dedicated pools free, and naming a dedicated pool is 403.
// The control is the honest operator: with the token, an empty provision claims the free dedicated
// pool, as before. An unknown pool is refused by name, without the list of the pod's pools, for
// both callers; a known one is served.
func TestAnonymousProvisionsClaimNoDedicatedPool(t *testing.T) {
	e := newEnv(t, poolDef{id: "ded1", role: store.RoleDedicated}, poolDef{id: "ded2", role: store.RoleDedicated}, poolDef{id: "shared", role: store.RoleShared})
	open := e.pod("open", func(c *api.Config) { c.Limits.ProvisionToken, c.Limits.OpenProvisioning = "", true })
	for i := range 3 {
		code, m := open.do(t, "POST", "/v1/provision", "", strings.NewReader(""), nil)
		if code != 200 || m["pool"] != "shared" {
			t.Fatalf("anonymous empty provision %d: %d %v, want 200 in pool shared", i, code, m)
		}
	}
	if code, m := open.do(t, "POST", "/v1/provision", "", strings.NewReader(`{"pool":"ded1"}`), nil); code != 403 {
		t.Fatalf("anonymous provision naming a dedicated pool: %d %v, want 403", code, m)
	}
	for _, p := range []*pod{open, e.pod("token", nil)} {
		code, m := p.do(t, "POST", "/v1/provision", "", strings.NewReader(`{"pool":"no-such-pool"}`), provisionHdr)
		msg, _ := m["error"].(string)
		if code != 400 || !strings.Contains(msg, `"no-such-pool"`) {
			t.Fatalf("unknown pool: %d %v, want 400 naming the input", code, m)
		}
		for _, id := range []string{"ded1", "ded2", "shared"} {
			if strings.Contains(msg, id) {
				t.Fatalf("the answer to an unknown pool names the pod's pool %q: %s", id, msg)
			}
		}
		if code, m := p.do(t, "POST", "/v1/provision", "", strings.NewReader(`{"pool":"shared"}`), provisionHdr); code != 200 {
			t.Fatalf("known pool: %d %v", code, m)
		}
	}
	// The token holder: both dedicated pools were left free by the anonymous provisions.
	tok := e.pod("token2", nil)
	for _, want := range []string{"ded1", "ded2", "shared"} {
		code, m := tok.do(t, "POST", "/v1/provision", "", strings.NewReader(""), provisionHdr)
		if code != 200 || m["pool"] != want {
			t.Fatalf("provision with the token: %d %v, want pool %s", code, m, want)
		}
	}
}
