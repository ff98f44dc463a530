package kinds_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seqgate/seqgate/faults/internal/faultstest"
	"github.com/seqgate/seqgate/faults/kinds"
)

// TestAdminHooksSendTheEnvToken: a pod whose admin endpoints need a token (eventlogd --admin-token,
// answering 401 otherwise) is driven by the admin fault when the Env hands out that token; with no
// token or a wrong one the fault's Inject fails with the 401, never a silent no-op.
func TestAdminHooksSendTheEnvToken(t *testing.T) {
	const want = "run-admin-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Admin-Token") != want {
			http.Error(w, `{"error":"admin endpoints need the admin token"}`, http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, token string
		wantErr     bool
	}{{"the pods' token", want, false}, {"no token", "", true}, {"wrong token", "guess", true}} {
		t.Run(tc.name, func(t *testing.T) {
			env := faultstest.NewEnv(t)
			env.Admin["p1"], env.Token = srv.URL, tc.token
			f := build(t, kinds.OutboxPollerStall(), env, "p1", 10*time.Second, kinds.PollerStallParams{})
			err := f.Inject(context.Background())
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "HTTP 401") {
					t.Fatalf("Inject without the pods' token: %v, want the 401", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Heal(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
