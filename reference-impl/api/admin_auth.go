package api

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// AdminTokenHeader carries the admin token; "Authorization: Bearer <token>" works too.
const AdminTokenHeader = "X-Admin-Token"

// mountAdmin serves the test-only admin endpoints under /v1/admin/, behind Config.AdminToken when
// one is set: they can fail inserts, stall the poller and delete tenants, so a pod reachable beyond
// loopback must not serve them to anyone who asks (CheckAdminExposure enforces the token there).
func (s *Server) mountAdmin(mux *http.ServeMux) {
	admin := http.NewServeMux()
	s.adminRoutes(admin)
	mux.Handle("/v1/admin/", requireToken(s.cfg.AdminToken, admin))
}

// requireToken passes requests that carry token (in X-Admin-Token or as a Bearer token) to next and
// answers 401 to the others; an empty token lets everything through.
func requireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get(AdminTokenHeader)
		if got == "" {
			got, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="eventlogd-admin"`)
			writeErr(w, http.StatusUnauthorized, "admin endpoints need the admin token (header "+AdminTokenHeader+" or Authorization: Bearer)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// CheckAdminExposure refuses to serve the admin endpoints without a token on a listen address that
// is not loopback-only (an empty host, 0.0.0.0, [::], a LAN address or a host name other than
// localhost): they are test hooks, and anyone who reaches the port could break the service with them.
func CheckAdminExposure(listen string, admin bool, token string) error {
	if !admin || token != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", listen, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--admin on --listen %s (beyond loopback) needs --admin-token (or EVENTLOGD_ADMIN_TOKEN): the admin endpoints can fail inserts and delete tenants", listen)
}
