package run

import (
	"testing"
	"time"

	"github.com/seqgate/seqgate/harness/pods"
	"github.com/seqgate/seqgate/harness/scenario"
)

// TestPassInterval: audit passes run only when the retention can sweep a row of the run before the
// final audit (harness-run pods, a retention shorter than load + drain + a minute), every quarter
// of the retention within [250 ms, 5 s]; never against an external target or without an audit.
func TestPassInterval(t *testing.T) {
	d := func(s string) scenario.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return scenario.Duration(v)
	}
	tests := []struct {
		name      string
		retention string // "0s": eventlogd's default (1h)
		external  bool
		audited   bool
		want      time.Duration
	}{
		{name: "default retention, short run", retention: "0s", audited: true, want: 0},
		{name: "retention longer than the run", retention: "2m", audited: true, want: 0},
		{name: "3 s retention", retention: "3s", audited: true, want: 750 * time.Millisecond},
		{name: "retention shorter than a second", retention: "500ms", audited: true, want: 250 * time.Millisecond},
		{name: "retention just under the run", retention: "1m29s", audited: true, want: 5 * time.Second},
		{name: "external target", retention: "3s", audited: true, external: true, want: 0},
		{name: "no audit", retention: "3s", audited: false, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scenario.Scenario{Duration: d("20s"), DrainTimeout: d("10s")}
			sc.Pods.Eventlogd.Retention = d(tc.retention)
			s := &state{sc: sc, sys: &system{audited: tc.audited}}
			if !tc.external {
				s.sys.fleet = &pods.Fleet{}
			}
			if got := passInterval(s); got != tc.want {
				t.Errorf("passInterval = %s, want %s", got, tc.want)
			}
		})
	}
}
