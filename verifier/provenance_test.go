package verifier

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
)

// runWithProvenance is the base ledger's run record with a provenance whose defects are given.
func runWithProvenance(defects string) string {
	return `{"k":"run","v":1,"run_id":"r1","scenario":"t","seed":1,"start_unix_ns":1000000000000,"budget":0.0001,"tenants":[{"id":"A","mode":"dedicated","cold":false},{"id":"B","mode":"shared","cold":false}],"pods":["p1","p2"],"target":"eventlogd",` +
		`"provenance":{"seqgate":{"module":"github.com/seqgate/seqgate","version":"(devel)","revision":"0123456789abcdef","time":"","modified":true,"go":"go1.26"},` +
		`"pods":{"path":"/bin/eventlogd","sha256":"ab12","version":"eventlogd github.com/seqgate/seqgate (devel)","build":{"module":"github.com/seqgate/seqgate","version":"(devel)","revision":"","time":"","modified":false,"go":"go1.26"}},` +
		`"pod_flags":["--retry-tenant-cap=50"],"defects":` + defects + `,"sets":["pods.count=2"],"args":["run","s.yaml","--set=pods.count=2"],` +
		`"scenario_file":"s.yaml","scenario_sha256":"cafe","machine":{"cores":2,"os":"linux","arch":"amd64","load_avg":[1.5,1,0.5]}}}`
}

// TestProvenanceInEveryOutput: a run on a defect build names the defect in summary.json, the verdict
// line of the text summary and JUnit's properties; a clean build names none. Both directions, on a
// pass and on a fail.
func TestProvenanceInEveryOutput(t *testing.T) {
	cases := []struct {
		name, defects string
		fail          bool
		wantDefect    bool
	}{
		{"defect build, pass", `["late-commit-skip"]`, false, true},
		{"defect build, fail", `["late-commit-skip"]`, true, true},
		{"clean build, pass", `[]`, false, false},
		{"clean build, fail", `null`, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := edit{replace: map[string]string{"run": runWithProvenance(c.defects), "end": `{"k":"end","t":10000000,"drained":true,"load_avg":[2.25,1,0.5]}`}}
			if c.fail {
				e.drop = []string{"evA1"}
			}
			s := verifyText(t, e.build(), Options{})
			if got := s.Verdict == VerdictFail; got != c.fail {
				t.Fatalf("verdict %s", s.Verdict)
			}
			var js bytes.Buffer
			if err := WriteJSON(&js, s); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Run struct {
					Provenance struct {
						Defects []string `json:"defects"`
						Machine struct {
							Cores int `json:"cores"`
						} `json:"machine"`
						ScenarioSHA256 string `json:"scenario_sha256"`
					} `json:"provenance"`
					LoadAvgEnd []float64 `json:"load_avg_end"`
				} `json:"run"`
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			p := doc.Run.Provenance
			if (len(p.Defects) == 1 && p.Defects[0] == "late-commit-skip") != c.wantDefect || p.Machine.Cores != 2 || p.ScenarioSHA256 != "cafe" || len(doc.Run.LoadAvgEnd) != 3 {
				t.Errorf("summary.json's provenance: %+v, load at the end %v", p, doc.Run.LoadAvgEnd)
			}
			var txt bytes.Buffer
			if err := WriteText(&txt, s); err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(txt.String(), "\n")
			if got := strings.Contains(first, "(defect build: late-commit-skip)"); got != c.wantDefect {
				t.Errorf("verdict line %q: defect named %v, want %v", first, got, c.wantDefect)
			}
			for _, want := range []string{"judged:\n", "  seqgate: github.com/seqgate/seqgate (devel) (revision 0123456789ab, modified) go1.26\n",
				"  pods binary: /bin/eventlogd sha256 ab12, --version: eventlogd github.com/seqgate/seqgate (devel)",
				"  overrides (--set): pods.count=2\n", "  scenario file: s.yaml sha256 cafe, seed 1\n",
				"  machine: 2 cores, linux/amd64, load average (1/5/15 min) 1.50 1.00 0.50 at the start, 2.25 1.00 0.50 at the end\n"} {
				if !strings.Contains(txt.String(), want) {
					t.Errorf("text lacks %q:\n%s", want, txt.String())
				}
			}
			if got := strings.Contains(txt.String(), "  defects: none (a clean build)\n"); got == c.wantDefect {
				t.Errorf("text's defects line: clean %v, want %v", got, !c.wantDefect)
			}
			var ju bytes.Buffer
			if err := WriteJUnit(&ju, s); err != nil {
				t.Fatal(err)
			}
			var suites struct {
				Suites []struct {
					Props []struct {
						Name  string `xml:"name,attr"`
						Value string `xml:"value,attr"`
					} `xml:"properties>property"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal(ju.Bytes(), &suites); err != nil {
				t.Fatal(err)
			}
			props := map[string]string{}
			for _, p := range suites.Suites[0].Props {
				props[p.Name] = p.Value
			}
			if got := props["defects"] == "late-commit-skip"; got != c.wantDefect {
				t.Errorf("JUnit defects property %q", props["defects"])
			}
			if got := strings.Contains(props["verdict"], "defect build: late-commit-skip"); got != c.wantDefect {
				t.Errorf("JUnit verdict property %q", props["verdict"])
			}
			if props["machine"] == "" || props["scenario file"] == "" || props["seqgate"] == "" {
				t.Errorf("JUnit properties lack the machine, scenario or build: %v", props)
			}
		})
	}
}

// TestNoProvenanceSaysSo: a ledger without provenance says so and names no defect.
func TestNoProvenanceSaysSo(t *testing.T) {
	s := verifyText(t, edit{}.build(), Options{})
	if s.Run.Provenance != nil || DefectNote(s) != "" {
		t.Fatalf("provenance %+v", s.Run.Provenance)
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "provenance: none in the ledger") {
		t.Errorf("text:\n%s", txt.String())
	}
}

// TestEveryCheckHasAMeaning: every descriptor says in one line what its number means, and a threshold
// takes the meaning of the number it bounds.
func TestEveryCheckHasAMeaning(t *testing.T) {
	for _, d := range checks {
		if d.Meaning == "" || strings.Contains(d.Meaning, "\n") || len(d.Meaning) > 160 {
			t.Errorf("check %s: meaning %q (want one line of at most 160 bytes)", d.Name, d.Meaning)
		}
	}
	for name, want := range map[string]string{
		"threshold:latency_ms.p99@steady<500": "a bound the scenario sets on latency_ms.p99 in the steady window: " + latencyCheckDesc.Meaning,
		"threshold:recovery_ms.f1<=2000":      "a bound the scenario sets on recovery_ms.f1: " + recoveryCheckDesc.Meaning,
		"threshold:per_tenant.t1.skipped==0":  "a bound the scenario sets on per_tenant.t1.skipped: " + skippedCheckDesc.Meaning,
		"threshold:no_such_number<1":          "a bound the scenario sets on no_such_number",
		CheckLeaks:                            leaksCheckDesc.Meaning,
		"no-such-check":                       "",
	} {
		if got := Meaning(name); got != want {
			t.Errorf("Meaning(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestPassShowsChecksNotWitnesses: a passing run prints every check that ran, one line each with its
// meaning, and keeps the witnesses of counted anomalies (drops) out of the terminal; a failing one
// prints the failed check's witnesses and only names the others.
func TestPassShowsChecksNotWitnesses(t *testing.T) {
	drop := `{"k":"drop","tenant":"A","intended_t":3000000}`
	run := strings.Replace(baseLedger[0].json, `"target":"eventlogd"`, `"target":"eventlogd","thresholds":{"dropped_fraction":["<= 0.5"]}`, 1)
	pass := verifyText(t, edit{replace: map[string]string{"run": run}, after: map[string][]string{"mutA1": {drop}}}.build(), Options{})
	fail := verifyText(t, edit{replace: map[string]string{"run": run}, drop: []string{"evA1"}, after: map[string][]string{"mutA1": {drop}}}.build(), Options{})
	if pass.Verdict != VerdictPass || fail.Verdict != VerdictFail || len(pass.Witnesses["drops"]) != 1 {
		t.Fatalf("verdicts %s %s, drops witnesses %v", pass.Verdict, fail.Verdict, pass.Witnesses)
	}
	for _, c := range []struct {
		s             *Summary
		shown, hidden []string
	}{
		{pass, []string{"witnesses kept in summary.json, of no failed check: drops (1), drops_by_tenant (1)\n"}, []string{"witnesses:\n", `"intended_ms"`, "structural ops:"}},
		{fail, []string{"witnesses kept in summary.json, of no failed check: drops (1), drops_by_tenant (1)\n", "witnesses:\n  skipped (first 1):"}, []string{`"intended_ms"`}},
	} {
		var b bytes.Buffer
		if err := WriteText(&b, c.s); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range c.shown {
			if !strings.Contains(out, want) {
				t.Errorf("%s: lacks %q:\n%s", c.s.Verdict, want, out)
			}
		}
		for _, not := range c.hidden {
			if strings.Contains(out, not) {
				t.Errorf("%s: shows %q:\n%s", c.s.Verdict, not, out)
			}
		}
		if n := strings.Count(out, "\n  ok   ") + strings.Count(out, "\n  FAIL ") + strings.Count(out, "\n  n/j  "); n != len(c.s.Checks) {
			t.Errorf("%s: %d check lines, %d checks:\n%s", c.s.Verdict, n, len(c.s.Checks), out)
		}
		if !strings.Contains(out, "  ok   leaks == 0, measured 0: "+leaksCheckDesc.Meaning+"\n") {
			t.Errorf("%s: no leaks line with its meaning:\n%s", c.s.Verdict, out)
		}
		if !strings.Contains(out, "(crashes_per_pod_year 12 and pods_in_fleet 20: defaults, not set by the run record)") {
			t.Errorf("%s: the projection's defaults are not named:\n%s", c.s.Verdict, out)
		}
	}
}

// TestJUnitFailureSaysWhatItMeans: a failed check's JUnit message carries its meaning, and every
// verify testcase has it in system-out.
func TestJUnitFailureSaysWhatItMeans(t *testing.T) {
	s := verifyText(t, edit{drop: []string{"evA1"}}.build(), Options{})
	var b bytes.Buffer
	if err := WriteJUnit(&b, s); err != nil {
		t.Fatal(err)
	}
	want := `message="skipped: measured 1, want == 0 (` + skippedCheckDesc.Meaning + `)"`
	if !strings.Contains(strings.ReplaceAll(b.String(), "&#39;", "'"), want) {
		t.Errorf("JUnit lacks %s:\n%s", want, b.String())
	}
	if !strings.Contains(b.String(), "<system-out>"+xmlEscape(leaksCheckDesc.Meaning)+"</system-out>") {
		t.Errorf("the leaks testcase has no meaning:\n%s", b.String())
	}
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// TestTwoOriginsLabelled: with the end record's load_t the fault table gives each start on both
// clocks, labelled; without it, the run's clock only, said so.
func TestTwoOriginsLabelled(t *testing.T) {
	fault := []string{`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"A","phase":"start","t":2500000}`,
		`{"k":"fault","id":"f1","kind":"tenant_db_stall","target":"A","phase":"stop","t":5500000}`}
	for _, c := range []struct {
		end, want string
	}{
		{`{"k":"end","t":10000000,"drained":true,"load_t":500000}`, "start 0.003s (load 0.002s)"},
		{`{"k":"end","t":10000000,"drained":true}`, "start 0.003s  "},
	} {
		s := verifyText(t, edit{replace: map[string]string{"end": c.end}, after: map[string][]string{"evB3": fault}}.build(), Options{})
		var b bytes.Buffer
		if err := WriteText(&b, s); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: fault table lacks %q:\n%s", c.end, c.want, out)
		}
		labelled := strings.Contains(out, "in brackets since the load began (at 0.001s: a scenario's at: counts from there)")
		if labelled != strings.Contains(c.end, "load_t") {
			t.Errorf("%s: the origins are labelled %v:\n%s", c.end, labelled, out)
		}
		if got := s.Run.LoadStartMs != nil; got != strings.Contains(c.end, "load_t") {
			t.Errorf("%s: load_start_ms %v", c.end, s.Run.LoadStartMs)
		}
	}
}
