package api

import (
	"fmt"
	"testing"
	"time"

	"github.com/seqgate/seqgate/internal/wait"
	"github.com/seqgate/seqgate/reference-impl/store"
)

// TestAuthCacheEvictsLeastRecentlyUsed: at its cap the key cache evicts the least recently used
// key, never everything: a tenant in use survives a flood of new keys (the old cache forgot every
// key at 100,000, so a meta outage then failed every tenant).
func TestAuthCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newAuthCache(time.Hour, time.Hour, time.Hour, 100)
	c.put("busy", store.Tenant{ID: "busy"})
	c.put("idle", store.Tenant{ID: "idle"})
	for i := range 10000 {
		c.put(fmt.Sprintf("flood%d", i), store.Tenant{ID: "x"})
		if i%50 == 0 {
			if _, _, ok := c.get("busy"); !ok {
				t.Fatalf("the busy tenant's key was evicted after %d new keys", i)
			}
		}
	}
	if n := c.len(); n != 100 {
		t.Fatalf("cache holds %d keys, want the cap 100", n)
	}
	if _, _, ok := c.get("busy"); !ok {
		t.Fatal("the busy tenant's key was evicted")
	}
	if _, _, ok := c.get("idle"); ok {
		t.Fatal("the least recently used key was kept past the cap (negative control: eviction happens)")
	}
	if _, _, ok := c.get("flood9999"); !ok {
		t.Fatal("the newest key is missing")
	}
}

// TestAuthCacheNegativeEntries: a key the meta DB did not know is refused from memory for negTTL;
// a later put (the key became valid) clears it; the negative set is capped.
func TestAuthCacheNegativeEntries(t *testing.T) {
	c := newAuthCache(time.Hour, time.Hour, time.Hour, 10)
	if c.unknown([]byte("k")) {
		t.Fatal("unknown before any lookup")
	}
	c.notFound("k")
	if !c.unknown([]byte("k")) {
		t.Fatal("a wrong key is not remembered")
	}
	c.put("k", store.Tenant{ID: "t"})
	if c.unknown([]byte("k")) {
		t.Fatal("a key found later is still refused")
	}
	for i := range 1000 {
		c.notFound(fmt.Sprintf("w%d", i))
	}
	if len(c.neg) > 10 {
		t.Fatalf("%d negative entries, want at most 10", len(c.neg))
	}
	short := newAuthCache(time.Hour, time.Hour, time.Nanosecond, 10)
	short.notFound("k")
	wait.For(t, 10*time.Second, "the negative entry (TTL 1 ns) to expire", func() bool { return !short.unknown([]byte("k")) })
}

// TestAuthCacheKeepsTheStore: a key's entry keeps the store a request built for its tenant and
// hands it to the next request; a store of another tenant is not kept, and a revalidation (put)
// forgets it, so the next request builds the store anew.
func TestAuthCacheKeepsTheStore(t *testing.T) {
	c := newAuthCache(time.Hour, time.Hour, time.Hour, 100)
	ten := store.Tenant{ID: "a", PoolID: "p"}
	c.put("k", ten)
	st := &store.TenantStore{TenantID: "a", PoolID: "p"}
	for _, step := range []struct {
		name string
		do   func()
		want *store.TenantStore
	}{
		{"new entry: none", func() {}, nil},
		{"kept", func() { c.keepStore([]byte("k"), st) }, st},
		{"another tenant's store: not kept", func() { c.keepStore([]byte("k"), &store.TenantStore{TenantID: "b", PoolID: "p"}) }, st},
		{"another pool's store: not kept", func() { c.keepStore([]byte("k"), &store.TenantStore{TenantID: "a", PoolID: "q"}) }, st},
		{"revalidated: forgotten", func() { c.put("k", ten) }, nil},
	} {
		step.do()
		got, kept, fresh, ok := c.getBytes([]byte("k"))
		if got != ten || !fresh || !ok || kept != step.want {
			t.Fatalf("%s: %+v %p %v %v, want the store %p", step.name, got, kept, fresh, ok, step.want)
		}
	}
}
