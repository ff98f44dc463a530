package api_test

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestGBKSharedPoolPathsStayPaths, end to end: in a shared pool whose DSN says
// charset=gbk, tenant A's paths built to break out of a GBK-escaped string literal neither create
// a file in tenant B's space nor read B's file; A's odd path is an ordinary file of A's. The payload
// is valid UTF-8 (U+4E3F is E4 B8 BF, and GBK reads BF 5C as one character, swallowing the escape
// backslash), so the API's UTF-8 check lets it through to the store: with interpolation forced on
// the DSN this test fails ("tenant B has a file A planted"). The store-level negative control is
// TestGBKPoolNoCrossTenantInjection in reference-impl/store.
func TestGBKSharedPoolPathsStayPaths(t *testing.T) {
	e := newEnv(t, poolDef{id: "shared", role: store.RoleShared})
	e.pools[0].DSN += "&charset=gbk"
	p := e.pod("p", nil)
	tb, kb := p.provision(t, "shared")
	_, ka := p.provision(t, "shared")
	p.write(t, kb, "/secret", "b-secret")
	hx := func(s string) string { return "0x" + hex.EncodeToString([]byte(s)) }
	write := fmt.Sprintf("/x\u4e3f', 0, 420, 1, NULL, NOW()), (%s, %s, 0, 420, 1, %s, NOW()) -- ", hx(tb), hx("/planted"), hx("pwn"))
	read := fmt.Sprintf("/y\u4e3f' OR tenant_id = %s AND path = %s -- ", hx(tb), hx("/secret"))
	esc := func(s string) string { return "/v1/fs" + strings.ReplaceAll(url.PathEscape(s), "%2F", "/") }
	if code, m := p.do(t, "POST", esc(write)+"?create", ka, nil, nil); code != 200 {
		t.Fatalf("A's create of its odd path: %d %v", code, m)
	}
	if code, _, body := p.raw(t, "GET", "/v1/fs/planted", kb, nil, nil); code != 404 {
		t.Fatalf("tenant B has a file A planted: %d %s", code, body)
	}
	if code, _, body := p.raw(t, "GET", esc(read), ka, nil, nil); code != 404 || strings.Contains(body, "b-secret") {
		t.Fatalf("A's read path reached B's file: %d %s", code, body)
	}
	if code, _, body := p.raw(t, "GET", esc(write), ka, nil, nil); code != 200 {
		t.Fatalf("A cannot read back its own odd path: %d %s", code, body)
	}
}
