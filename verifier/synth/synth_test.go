package synth

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/seqgate/seqgate/ledger"
)

func generate(t testing.TB, cfg Config) ([]byte, Truth) {
	t.Helper()
	var buf bytes.Buffer
	w := ledger.NewWriter(&buf)
	truth, err := Generate(cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), truth
}

// allAnomalies asks for every anomaly class at once.
var allAnomalies = Config{Seed: 1, Tenants: 5, ConsumersPerTenant: 2, Events: 8000, Cold: 2, Lost: 3, Silent: 2,
	CrashLoss: 2, Skipped: 3, Undelivered: 2, Duplicates: 2, Leaks: 2, Unexpected: 1, Reorder: 2, Recovered: 2,
	SeqTooOld: 2, SpuriousResets: 1, ColdWakeups: 1}

// TestLedgerParsesCleanly: every generated ledger reads without error or warning, starts with the
// run record, keeps the spec's order (post-run records last, end last) and observation time order.
func TestLedgerParsesCleanly(t *testing.T) {
	for _, cfg := range []Config{
		{Seed: 2, Tenants: 1, ConsumersPerTenant: 1, Events: 1},
		{Seed: 3, Tenants: 3, ConsumersPerTenant: 0, Events: 500},
		allAnomalies,
	} {
		b, truth := generate(t, cfg)
		r, err := ledger.NewReader("synth", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		var last int64
		post := false
		var kinds []string
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("cfg %+v: %v", cfg, err)
			}
			n++
			kinds = append(kinds, rec.K)
			switch {
			case rec.K == ledger.KindRun:
			case ledger.IsPostRun(rec.K):
				post = true
			default:
				key := rec.T
				if rec.K == ledger.KindMut {
					key = rec.DoneT
					if rec.IntendedT > rec.T || rec.T > rec.DoneT {
						t.Fatalf("mut %s: intended_t %d, t %d, done_t %d out of order", rec.MID, rec.IntendedT, rec.T, rec.DoneT)
					}
				}
				if key < last {
					t.Fatalf("record %d (%s) at %d after %d: not in observation order", n, rec.K, key, last)
				}
				last = key
			}
		}
		if len(r.Warnings()) > 0 {
			t.Errorf("warnings: %v", r.Warnings())
		}
		if !post || kinds[0] != ledger.KindRun || kinds[len(kinds)-1] != ledger.KindEnd {
			t.Errorf("kinds start %s end %s", kinds[0], kinds[len(kinds)-1])
		}
		if n != truth.Records {
			t.Errorf("read %d records, truth says %d", n, truth.Records)
		}
	}
}

// TestTruthCountsMatchFlags: every flag's count is what the truth reports, instance by instance.
func TestTruthCountsMatchFlags(t *testing.T) {
	cfg := allAnomalies
	_, tr := generate(t, cfg)
	checks := []struct {
		name      string
		want, got int
	}{
		{"acked", cfg.Events, tr.Acked},
		{"lost", cfg.Lost + cfg.Silent + cfg.CrashLoss, tr.Lost},
		{"counter-explained", cfg.Lost, tr.Lost - tr.LostByReason["crash"] - tr.LostByReason["silent"]},
		{"silent", cfg.Silent, tr.LostByReason["silent"]},
		{"crash", cfg.CrashLoss, tr.LostByReason["crash"]},
		{"skipped", cfg.Skipped, len(tr.Instances.Skipped)},
		{"undelivered", cfg.Undelivered, len(tr.Instances.Undelivered)},
		{"duplicates", cfg.Duplicates, len(tr.Instances.Duplicates)},
		{"leaks", cfg.Leaks, len(tr.Instances.Leaks)},
		{"unexpected", cfg.Unexpected, len(tr.Instances.Unexpected)},
		{"reorder", cfg.Reorder, tr.Reorder.Overtaken},
		{"recovered", cfg.Recovered, len(tr.Instances.Recovered)},
		{"reset_covered", cfg.SeqTooOld, tr.ResetCovered},
		{"spurious", cfg.SpuriousResets, tr.SpuriousResets},
		{"cold_wakeups", cfg.ColdWakeups, tr.ColdWakeups},
	}
	for _, c := range checks {
		if c.want != c.got {
			t.Errorf("%s: truth %d, asked %d", c.name, c.got, c.want)
		}
	}
	if tr.Verdict != "fail" {
		t.Errorf("verdict %s, want fail", tr.Verdict)
	}
	// A clean run passes.
	_, clean := generate(t, Config{Seed: 9, Tenants: 4, ConsumersPerTenant: 2, Events: 3000, Cold: 1})
	if clean.Verdict != "pass" || clean.Lost != 0 || len(clean.FailedBecause) != 0 {
		t.Errorf("clean run: verdict %s, lost %d, failed %v", clean.Verdict, clean.Lost, clean.FailedBecause)
	}
	// Loss within budget passes: 1 counter-explained loss in 20000 acked (5e-5 <= 1e-4).
	_, within := generate(t, Config{Seed: 9, Tenants: 2, ConsumersPerTenant: 1, Events: 20000, Lost: 1})
	if within.Verdict != "pass" {
		t.Errorf("1 lost of 20000: verdict %s (%v)", within.Verdict, within.FailedBecause)
	}
}

func TestDeterministic(t *testing.T) {
	a, ta := generate(t, allAnomalies)
	b, tb := generate(t, allAnomalies)
	if !bytes.Equal(a, b) {
		t.Fatal("same config, different bytes")
	}
	if ta.Records != tb.Records || ta.Instances.Lost[0] != tb.Instances.Lost[0] {
		t.Fatal("same config, different truth")
	}
	other := allAnomalies
	other.Seed++
	c, _ := generate(t, other)
	if bytes.Equal(a, c) {
		t.Fatal("different seeds, same bytes")
	}
}

func TestValidate(t *testing.T) {
	base := Config{Seed: 1, Tenants: 3, ConsumersPerTenant: 2, Events: 1000}
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"ok", func(*Config) {}, ""},
		{"negative", func(c *Config) { c.Skipped = -1 }, "--skipped -1: must not be negative"},
		{"no tenants", func(c *Config) { c.Tenants = 0 }, "--tenants 0"},
		{"all cold", func(c *Config) { c.Cold = 3 }, "--cold 3"},
		{"wakeups over cold", func(c *Config) { c.Cold = 1; c.ColdWakeups = 2 }, "--cold-wakeups 2"},
		{"more lost than events", func(c *Config) { c.Lost = 900 }, "too few for 900 lost mutations"},
		{"too few events", func(c *Config) { c.Events = 2 }, "--events 2: too few"},
		{"crash with one pod", func(c *Config) { c.CrashLoss = 1; c.Pods = 1 }, "--crash-loss 1: needs --pods >= 2"},
		{"leak with one tenant", func(c *Config) { c.Tenants = 1; c.Leaks = 1 }, "--leaks 1: needs at least 2 active tenants"},
		{"consumer anomalies without consumers", func(c *Config) { c.ConsumersPerTenant = 0; c.Duplicates = 1 }, "--consumers-per-tenant >= 1"},
		{"skips and resets on one consumer", func(c *Config) { c.Tenants = 1; c.ConsumersPerTenant = 1; c.Skipped = 1; c.SeqTooOld = 1 },
			"need 2 consumers"},
		{"too many consumer anomalies", func(c *Config) { c.Duplicates = 500 }, "too few for 500 consumer anomalies"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.mod(&cfg)
			err := cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
