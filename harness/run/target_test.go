package run

import (
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/podprofile"
	"github.com/seqgate/seqgate/harness/service"
)

// The wait for provisioned tenants is --ready-timeout when given, else the pod profile's own
// (drive9's 3 minutes), else the default; eventlogd's profile has none of its own.
func TestTenantsTimeout(t *testing.T) {
	d9, err := service.Shipped.Pods(service.Drive9)
	if err != nil {
		t.Fatal(err)
	}
	el, err := service.Shipped.Pods(service.Eventlogd)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		flag time.Duration
		prof *podprofile.Profile
		want time.Duration
	}{
		{"drive9 pods, no flag: the profile's", 0, d9, 3 * time.Minute},
		{"drive9 pods, the flag wins", 5 * time.Second, d9, 5 * time.Second},
		{"eventlogd pods, no flag: the default", 0, el, DefaultReadyTimeout},
		{"external target, no flag: the default", 0, nil, DefaultReadyTimeout},
		{"external target, the flag", 3 * time.Minute, nil, 3 * time.Minute},
	} {
		if got := tenantsTimeout(c.flag, c.prof); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
