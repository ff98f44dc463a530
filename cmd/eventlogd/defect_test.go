package main

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestDefectsNeedTheTestFlag: a seeded defect is never switched on by the
// environment alone; with --test-defects on the command line it is, and the pod says so loudly.
func TestDefectsNeedTheTestFlag(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		wantOn  string // defects switched on ("" = none)
		wantErr string
	}{
		{"no defect", nil, nil, "", ""},
		{"env alone", map[string]string{"EVENTLOGD_DEFECT": "cross-tenant-leak"}, nil, "", "test-only"},
		{"env gate is ignored", map[string]string{"EVENTLOGD_DEFECT": "cross-tenant-leak", "EVENTLOGD_TEST_DEFECTS": "true"}, nil, "", "test-only"},
		{"flag alone", nil, []string{"--defect", "cross-tenant-leak"}, "", "add --test-defects"},
		{"flag and gate", nil, []string{"--test-defects", "--defect", "cross-tenant-leak"}, "cross-tenant-leak", ""},
		{"env defect and gate flag", map[string]string{"EVENTLOGD_DEFECT": "uncounted-drop"}, []string{"--test-defects"}, "uncounted-drop", ""},
		{"gate without a defect is quiet", nil, []string{"--test-defects"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var o options
			fs := flags(&o, io.Discard)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if err := applyEnv(fs); err != nil {
				t.Fatal(err)
			}
			var stderr, logs bytes.Buffer
			d, err := o.defectSet(&stderr, slog.New(slog.NewTextHandler(&logs, nil)))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.String() != tc.wantOn {
				t.Fatalf("defects on = %q, want %q", d.String(), tc.wantOn)
			}
			loud := strings.Contains(stderr.String(), "SEEDED DEFECTS ON ("+tc.wantOn+")") && strings.Contains(logs.String(), "level=ERROR")
			if loud != (tc.wantOn != "") {
				t.Fatalf("loud warning = %v with defects %q; stderr %q log %q", loud, tc.wantOn, stderr.String(), logs.String())
			}
		})
	}
}
